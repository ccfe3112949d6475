#include "apiserver/registry/service_allocator.h"

#include <arpa/inet.h>

#include <utility>

#include "absl/strings/numbers.h"
#include "api/errors/errors.h"
#include "api/schema/field_error.h"
#include "apiserver/internal/object_fields.h"
#include "base/str_cat.h"
#include "glog/logging.h"
#include "rapidjson/document.h"

namespace kcr {
namespace apiserver {
namespace {

using rapidjson::Value;

std::optional<uint32_t> ParseIpv4(const std::string& text) {
  in_addr a;
  if (inet_pton(AF_INET, text.c_str(), &a) != 1) return std::nullopt;
  return ntohl(a.s_addr);
}

std::string FormatIpv4(uint32_t ip) {
  return Cat(ip >> 24, ".", (ip >> 16) & 0xff, ".", (ip >> 8) & 0xff, ".",
             ip & 0xff);
}

std::string Text(const Value* v) {
  if (v == nullptr || !v->IsString()) return "";
  return std::string(v->GetString(), v->GetStringLength());
}

std::string Holder(const api::Object& service) {
  return Cat(service.namespace_(), "/", service.name());
}

api::FieldError Invalid(std::string field, std::string value,
                        std::string detail) {
  api::FieldError e;
  e.type = api::FieldError::Type::kInvalid;
  e.field = std::move(field);
  e.value = std::move(value);
  e.detail = std::move(detail);
  return e;
}

bool HasNodePorts(const std::string& type) {
  return type == "NodePort" || type == "LoadBalancer";
}

}  // namespace

ServiceAllocator::ServiceAllocator(ServiceAllocatorOptions options)
    : options_(std::move(options)), random_(std::random_device{}()) {
  const size_t slash = options_.service_cidr.find('/');
  int bits = 0;
  std::optional<uint32_t> base =
      slash == std::string::npos
          ? std::nullopt
          : ParseIpv4(options_.service_cidr.substr(0, slash));
  if (!base.has_value() ||
      !absl::SimpleAtoi(options_.service_cidr.substr(slash + 1), &bits) ||
      bits < 8 || bits > 30) {
    LOG(ERROR) << "invalid service CIDR " << options_.service_cidr
               << "; using 10.96.0.0/12";
    base = ParseIpv4("10.96.0.0");
    bits = 12;
  }
  size_ = 1u << (32 - bits);
  base_ = *base & ~(size_ - 1);
}

absl::StatusOr<ServiceAllocator::Allocation> ServiceAllocator::Allocate(
    const api::GroupKind& kind, const api::Object* live,
    api::ObjectBuilder* service) {
  const Value* spec = service->Find("/spec");
  if (spec == nullptr || !spec->IsObject()) return Allocation{};
  const std::string type = Text(service->Find("/spec/type"));
  std::vector<api::FieldError> errors;
  MutexLock l(&mu_);
  Allocation a;
  a.holder = live != nullptr ? Holder(*live) : Cat("?", ++creates_);
  auto held_by_other = [&](const std::string& holder) {
    return holder != a.holder;
  };

  if (type != "ExternalName") {
    std::string ip = Text(service->Find("/spec/clusterIP"));
    if (ip.empty()) {
      const Value* ips = service->Find("/spec/clusterIPs");
      if (ips != nullptr && ips->IsArray() && !ips->Empty()) {
        ip = Text(&(*ips)[0]);
      }
    }
    if (ip == "None") {
      (void)service->SetJson("/spec/clusterIPs", R"(["None"])");
    } else if (ip.empty()) {
      // Offsets 0 (network), 1 (the kubernetes Service) and the last
      // (broadcast) are never handed out.
      const uint32_t span = size_ - 3;
      std::uniform_int_distribution<uint32_t> pick(0, span - 1);
      const uint32_t start = pick(random_);
      std::optional<uint32_t> found;
      for (uint32_t i = 0; i < span; ++i) {
        const uint32_t candidate = base_ + 2 + (start + i) % span;
        if (ips_.count(candidate) == 0) {
          found = candidate;
          break;
        }
      }
      if (!found.has_value()) {
        errors.push_back(Invalid("spec.clusterIPs", "[]string(nil)",
                                 "failed to allocate IP: range is full"));
      } else {
        ips_[*found] = a.holder;
        a.ips.push_back(*found);
        ip = FormatIpv4(*found);
      }
    } else {
      const std::string value = Cat("[]string{\"", ip, "\"}");
      std::optional<uint32_t> parsed = ParseIpv4(ip);
      if (!parsed.has_value()) {
        errors.push_back(Invalid("spec.clusterIPs[0]", Quote(ip),
                                 "must be a valid IP address, (e.g. 10.9.8.7 "
                                 "or 2001:db8::ffff)"));
      } else if (*parsed - base_ >= size_ || *parsed == base_ ||
                 *parsed == base_ + size_ - 1) {
        errors.push_back(Invalid(
            "spec.clusterIPs", value,
            Cat("failed to allocate IP ", ip, ": the provided IP (", ip,
                ") is not in the valid range. The range of valid IPs is ",
                FormatIpv4(base_), "/", 32 - __builtin_ctz(size_))));
      } else {
        auto it = ips_.find(*parsed);
        if (it != ips_.end() && held_by_other(it->second)) {
          errors.push_back(Invalid("spec.clusterIPs", value,
                                   Cat("failed to allocate IP ", ip,
                                       ": provided IP is already allocated")));
        } else if (it == ips_.end()) {
          ips_[*parsed] = a.holder;
          a.ips.push_back(*parsed);
        }
      }
    }
    if (errors.empty()) {
      (void)service->SetString("/spec/clusterIP", ip);
      if (ip != "None") {
        (void)service->SetJson("/spec/clusterIPs", Cat("[\"", ip, "\"]"));
      }
      if (service->Find("/spec/ipFamilies") == nullptr) {
        (void)service->SetJson("/spec/ipFamilies", R"(["IPv4"])");
      }
      if (service->Find("/spec/ipFamilyPolicy") == nullptr) {
        (void)service->SetString("/spec/ipFamilyPolicy", "SingleStack");
      }
    }
  }

  if (HasNodePorts(type)) {
    if (type == "LoadBalancer" &&
        service->Find("/spec/allocateLoadBalancerNodePorts") == nullptr) {
      (void)service->SetBool("/spec/allocateLoadBalancerNodePorts", true);
    }
    const Value* ports = service->Find("/spec/ports");
    const int span = options_.node_port_max - options_.node_port_min + 1;
    for (rapidjson::SizeType i = 0;
         ports != nullptr && ports->IsArray() && i < ports->Size(); ++i) {
      const std::string pointer = Cat("/spec/ports/", i, "/nodePort");
      const Value* requested = service->Find(pointer);
      if (requested != nullptr && requested->IsInt() &&
          requested->GetInt() != 0) {
        const int port = requested->GetInt();
        const std::string field = Cat("spec.ports[", i, "].nodePort");
        if (port < options_.node_port_min || port > options_.node_port_max) {
          errors.push_back(Invalid(
              field, Cat(port),
              Cat("provided port is not in the valid range. The range of "
                  "valid ports is ",
                  options_.node_port_min, "-", options_.node_port_max)));
          continue;
        }
        auto it = node_ports_.find(port);
        if (it != node_ports_.end() && held_by_other(it->second)) {
          errors.push_back(
              Invalid(field, Cat(port), "provided port is already allocated"));
        } else if (it == node_ports_.end()) {
          node_ports_[port] = a.holder;
          a.node_ports.push_back(port);
        }
        continue;
      }
      std::uniform_int_distribution<int> pick(0, span - 1);
      const int start = pick(random_);
      std::optional<int> found;
      for (int k = 0; k < span; ++k) {
        const int candidate = options_.node_port_min + (start + k) % span;
        if (node_ports_.count(candidate) == 0) {
          found = candidate;
          break;
        }
      }
      if (!found.has_value()) {
        errors.push_back(Invalid(Cat("spec.ports[", i, "].nodePort"), "0",
                                 "failed to allocate a nodePort: range is "
                                 "full"));
        continue;
      }
      node_ports_[*found] = a.holder;
      a.node_ports.push_back(*found);
      (void)service->SetInt(pointer, *found);
    }
  }
  if (!errors.empty()) {
    for (uint32_t ip : a.ips) ips_.erase(ip);
    for (int port : a.node_ports) node_ports_.erase(port);
    const std::string name = Text(service->Find("/metadata/name"));
    return api::StatusError::Invalid(kind, name, errors).ToStatus();
  }
  return a;
}

void ServiceAllocator::Release(const Allocation& allocation) {
  MutexLock l(&mu_);
  for (uint32_t ip : allocation.ips) {
    auto it = ips_.find(ip);
    if (it != ips_.end() && it->second == allocation.holder) ips_.erase(it);
  }
  for (int port : allocation.node_ports) {
    auto it = node_ports_.find(port);
    if (it != node_ports_.end() && it->second == allocation.holder) {
      node_ports_.erase(it);
    }
  }
}

void ServiceAllocator::ReleaseLocked(const std::string& holder) {
  for (auto it = ips_.begin(); it != ips_.end();) {
    it = it->second == holder ? ips_.erase(it) : std::next(it);
  }
  for (auto it = node_ports_.begin(); it != node_ports_.end();) {
    it = it->second == holder ? node_ports_.erase(it) : std::next(it);
  }
}

void ServiceAllocator::Observe(const api::Object* previous,
                               const api::Object* current) {
  MutexLock l(&mu_);
  if (previous != nullptr) ReleaseLocked(Holder(*previous));
  if (current == nullptr) return;
  const std::string holder = Holder(*current);
  const std::string type = Text(current->Find("/spec/type"));
  if (type != "ExternalName") {
    std::optional<uint32_t> ip =
        ParseIpv4(Text(current->Find("/spec/clusterIP")));
    if (ip.has_value() && *ip - base_ < size_) ips_[*ip] = holder;
  }
  const Value* ports = current->Find("/spec/ports");
  if (ports == nullptr || !ports->IsArray()) return;
  for (const auto& p : ports->GetArray()) {
    if (!p.IsObject()) continue;
    auto it = p.FindMember("nodePort");
    if (it != p.MemberEnd() && it->value.IsInt() && it->value.GetInt() > 0) {
      node_ports_[it->value.GetInt()] = holder;
    }
  }
}

}  // namespace apiserver
}  // namespace kcr
