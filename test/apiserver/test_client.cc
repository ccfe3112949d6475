#include "test/apiserver/test_client.h"

#include <sys/socket.h>
#include <sys/time.h>

#include "boost/asio/connect.hpp"
#include "boost/asio/ip/tcp.hpp"
#include "boost/beast/core.hpp"
#include "boost/beast/http.hpp"
#include "rapidjson/pointer.h"

namespace kcr {
namespace apiserver {

namespace beast = boost::beast;
namespace http = boost::beast::http;
namespace net = boost::asio;
using tcp = boost::asio::ip::tcp;

namespace {

bool Connect(net::io_context& ioc, tcp::socket& socket, const std::string& host,
             int port, absl::Duration timeout, std::string* error) {
  beast::error_code ec;
  tcp::endpoint ep(net::ip::make_address(host, ec),
                   static_cast<unsigned short>(port));
  if (ec) {
    *error = ec.message();
    return false;
  }
  socket.connect(ep, ec);
  if (ec) {
    *error = ec.message();
    return false;
  }
  struct timeval tv;
  tv.tv_sec = absl::ToInt64Seconds(timeout);
  tv.tv_usec = 0;
  setsockopt(socket.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  setsockopt(socket.native_handle(), SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
  return true;
}

http::request<http::string_body> MakeRequest(
    const std::string& method, const std::string& target,
    const std::string& host, const std::string& body,
    const std::string& content_type,
    const std::map<std::string, std::string>& a,
    const std::map<std::string, std::string>& b) {
  http::request<http::string_body> req;
  req.method_string(method);
  req.target(target);
  req.version(11);
  req.set(http::field::host, host);
  if (!content_type.empty() && !body.empty()) {
    req.set(http::field::content_type, content_type);
  }
  for (const auto& [k, v] : a) req.set(k, v);
  for (const auto& [k, v] : b) req.set(k, v);
  req.body() = body;
  req.prepare_payload();
  return req;
}

}  // namespace

std::string TestResponse::Header(const std::string& name) const {
  auto it = headers.find(name);
  return it == headers.end() ? "" : it->second;
}

rapidjson::Document TestResponse::Json() const {
  rapidjson::Document d;
  d.Parse(body.data(), body.size());
  if (d.HasParseError()) d.SetNull();
  return d;
}

std::string TestResponse::Str(const char* pointer) const {
  rapidjson::Document d = Json();
  const rapidjson::Value* v = rapidjson::Pointer(pointer).Get(d);
  if (v == nullptr || !v->IsString()) return "";
  return v->GetString();
}

int64_t TestResponse::Int(const char* pointer) const {
  rapidjson::Document d = Json();
  const rapidjson::Value* v = rapidjson::Pointer(pointer).Get(d);
  if (v == nullptr || !v->IsInt64()) return -1;
  return v->GetInt64();
}

struct WatchStream::Impl {
  net::io_context ioc;
  tcp::socket socket{ioc};
  beast::flat_buffer buffer;
  http::response_parser<http::buffer_body> parser;
};

WatchStream::~WatchStream() {
  if (impl_ != nullptr) {
    beast::error_code ec;
    impl_->socket.shutdown(tcp::socket::shutdown_both, ec);
    impl_->socket.close(ec);
  }
}

std::optional<std::string> WatchStream::Next() {
  while (true) {
    size_t nl = pending_.find('\n');
    if (nl != std::string::npos) {
      std::string line = pending_.substr(0, nl);
      pending_.erase(0, nl + 1);
      return line;
    }
    if (ended_ || impl_ == nullptr) return std::nullopt;
    char tmp[8192];
    auto& body = impl_->parser.get().body();
    body.data = tmp;
    body.size = sizeof(tmp);
    beast::error_code ec;
    http::read_some(impl_->socket, impl_->buffer, impl_->parser, ec);
    size_t got = sizeof(tmp) - body.size;
    pending_.append(tmp, got);
    if (ec == http::error::need_buffer) continue;
    if (ec == beast::error::timeout || ec == net::error::would_block ||
        ec == net::error::try_again) {
      if (got == 0) return std::nullopt;
      continue;
    }
    if (ec || impl_->parser.is_done()) {
      ended_ = true;
      if (pending_.find('\n') == std::string::npos) return std::nullopt;
    }
  }
}

TestClient::TestClient(std::string host, int port, absl::Duration timeout)
    : host_(std::move(host)), port_(port), timeout_(timeout) {}

TestResponse TestClient::Do(const std::string& method,
                            const std::string& target, const std::string& body,
                            const std::string& content_type,
                            const std::map<std::string, std::string>& headers) {
  TestResponse out;
  net::io_context ioc;
  tcp::socket socket(ioc);
  if (!Connect(ioc, socket, host_, port_, timeout_, &out.error)) return out;
  auto req =
      MakeRequest(method, target, host_, body, content_type, headers_, headers);
  req.keep_alive(false);
  beast::error_code ec;
  http::write(socket, req, ec);
  if (ec) {
    out.error = ec.message();
    return out;
  }
  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.body_limit(size_t{1} << 30);
  http::read(socket, buffer, parser, ec);
  if (ec) {
    out.error = ec.message();
    return out;
  }
  auto& res = parser.get();
  out.status = static_cast<int>(res.result_int());
  for (const auto& f : res) {
    std::string name(f.name_string());
    for (char& c : name) c = static_cast<char>(tolower(c));
    out.headers[name] = std::string(f.value());
  }
  out.body = std::move(res.body());
  socket.shutdown(tcp::socket::shutdown_both, ec);
  return out;
}

std::unique_ptr<WatchStream> TestClient::Watch(
    const std::string& target,
    const std::map<std::string, std::string>& headers) {
  auto w = std::unique_ptr<WatchStream>(new WatchStream());
  w->impl_ = std::make_unique<WatchStream::Impl>();
  std::string error;
  if (!Connect(w->impl_->ioc, w->impl_->socket, host_, port_, timeout_,
               &error)) {
    w->ended_ = true;
    return w;
  }
  auto req = MakeRequest("GET", target, host_, "", "", headers_, headers);
  beast::error_code ec;
  http::write(w->impl_->socket, req, ec);
  if (ec) {
    w->ended_ = true;
    return w;
  }
  w->impl_->parser.body_limit(boost::none);
  http::read_header(w->impl_->socket, w->impl_->buffer, w->impl_->parser, ec);
  if (ec) {
    w->ended_ = true;
    return w;
  }
  w->status_ = static_cast<int>(w->impl_->parser.get().result_int());
  if (w->status_ != 200) {
    // Read the (non-streamed) error body as one "line".
    http::response_parser<http::string_body> p(std::move(w->impl_->parser));
    http::read(w->impl_->socket, w->impl_->buffer, p, ec);
    w->pending_ = p.get().body() + "\n";
    w->ended_ = true;
  }
  return w;
}

}  // namespace apiserver
}  // namespace kcr
