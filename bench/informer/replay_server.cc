#include "bench/informer/replay_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "base/mutex.h"
#include "bench/informer/harness_util.h"
#include "rapidjson/document.h"

namespace kcr::bench {
namespace {

// Most iovecs one writev takes (IOV_MAX is 1024 on Linux).
constexpr int kMaxIov = 1024;
// Events written as one chunk: up to this many, and about this many bytes.
constexpr int kEventsPerChunk = 256;
constexpr size_t kChunkBytes = 1 << 20;

}  // namespace

struct ReplayServer::Request {
  std::string method;
  std::string path;
  std::vector<std::pair<std::string, std::string>> query;
  bool close = false;

  std::string Param(std::string_view name) const {
    for (const auto& [k, v] : query) {
      if (k == name) return v;
    }
    return "";
  }
};

namespace {

std::string PercentDecode(absl::string_view in) {
  std::string out;
  out.reserve(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] == '+') {
      out.push_back(' ');
    } else if (in[i] == '%' && i + 2 < in.size() &&
               isxdigit(static_cast<unsigned char>(in[i + 1])) &&
               isxdigit(static_cast<unsigned char>(in[i + 2]))) {
      out.push_back(static_cast<char>(
          std::stoi(std::string(in.substr(i + 1, 2)), nullptr, 16)));
      i += 2;
    } else {
      out.push_back(in[i]);
    }
  }
  return out;
}

// Writes `iov` whole (any number of entries), retrying short writes.
bool WriteV(int fd, std::vector<iovec>* iov) {
  size_t first = 0;
  while (first < iov->size()) {
    int count =
        static_cast<int>(std::min<size_t>(kMaxIov, iov->size() - first));
    ssize_t n = writev(fd, iov->data() + first, count);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    size_t left = static_cast<size_t>(n);
    while (left > 0 && first < iov->size()) {
      iovec& v = (*iov)[first];
      if (left >= v.iov_len) {
        left -= v.iov_len;
        ++first;
      } else {
        v.iov_base = static_cast<char*>(v.iov_base) + left;
        v.iov_len -= left;
        left = 0;
      }
    }
    while (first < iov->size() && (*iov)[first].iov_len == 0) ++first;
  }
  return true;
}

iovec Iov(std::string_view s) {
  return iovec{const_cast<char*>(s.data()), s.size()};
}

// True when the peer has closed (or reset) the connection.
bool PeerClosed(int fd) {
  pollfd p{fd, POLLIN | POLLRDHUP, 0};
  if (poll(&p, 1, 0) <= 0) return false;
  if (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) return true;
  char c;
  ssize_t n = recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
  return n == 0;
}

bool ParseHead(absl::string_view head, ReplayServer::Request* request,
               size_t* body_length) {
  std::vector<absl::string_view> lines = absl::StrSplit(head, "\r\n");
  std::vector<absl::string_view> parts =
      absl::StrSplit(lines[0], ' ', absl::SkipEmpty());
  if (parts.size() != 3) return false;
  request->method = std::string(parts[0]);
  absl::string_view target = parts[1];
  size_t q = target.find('?');
  request->path = PercentDecode(target.substr(0, q));
  if (q != std::string_view::npos) {
    for (absl::string_view kv :
         absl::StrSplit(target.substr(q + 1), '&', absl::SkipEmpty())) {
      size_t eq = kv.find('=');
      request->query.emplace_back(PercentDecode(kv.substr(0, eq)),
                                  eq == absl::string_view::npos
                                      ? ""
                                      : PercentDecode(kv.substr(eq + 1)));
    }
  }
  for (size_t i = 1; i < lines.size(); ++i) {
    absl::string_view line = lines[i];
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    std::string name = absl::AsciiStrToLower(line.substr(0, colon));
    absl::string_view value =
        absl::StripAsciiWhitespace(line.substr(colon + 1));
    if (name == "content-length") {
      if (!absl::SimpleAtoi(value, body_length)) return false;
    } else if (name == "connection") {
      request->close = absl::AsciiStrToLower(value) == "close";
    }
  }
  return true;
}

bool WriteChunk(int fd, std::vector<std::string_view> pieces) {
  size_t size = 0;
  for (std::string_view p : pieces) size += p.size();
  char head[32];
  int head_len = std::snprintf(head, sizeof(head), "%zx\r\n", size);
  std::vector<iovec> iov;
  iov.reserve(pieces.size() + 2);
  iov.push_back(iovec{head, static_cast<size_t>(head_len)});
  for (std::string_view p : pieces) iov.push_back(Iov(p));
  iov.push_back(Iov("\r\n"));
  return WriteV(fd, &iov);
}

bool WriteJson(int fd, int code, absl::string_view body, bool close) {
  std::string http = absl::StrCat(
      "HTTP/1.1 ", code, code == 200 ? " OK" : " Error",
      "\r\nContent-Type: application/json\r\nContent-Length: ", body.size(),
      "\r\n", close ? "Connection: close\r\n" : "", "\r\n", body);
  return WriteAll(fd, http).ok();
}

bool WriteStatus(int fd, int code, absl::string_view reason,
                 absl::string_view message, bool close) {
  return WriteJson(
      fd, code,
      absl::StrCat("{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":"
                   "{},\"status\":\"Failure\",\"message\":\"",
                   message, "\",\"reason\":\"", reason, "\",\"code\":", code,
                   "}"),
      close);
}

}  // namespace

ReplayServer::ReplayServer(const PodCorpus* corpus, const Options& options)
    : corpus_(corpus), options_(options) {}

ReplayServer::~ReplayServer() { Stop(); }

absl::Status ReplayServer::Start(int port) {
  listen_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listen_fd_ < 0) return absl::InternalError(strerror(errno));
  int one = 1;
  setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      listen(listen_fd_, 128) != 0) {
    return absl::UnavailableError(
        absl::StrCat("listen on 127.0.0.1:", port, ": ", strerror(errno)));
  }
  socklen_t len = sizeof(addr);
  getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
  port_ = ntohs(addr.sin_port);
  accept_thread_ = std::thread([this] { AcceptLoop(); });
  return absl::OkStatus();
}

void ReplayServer::Stop() {
  {
    MutexLock lock(&mu_);
    if (stopping_) return;
    stopping_ = true;
    // Wakes the accept and every blocked read or write.
    if (listen_fd_ >= 0) shutdown(listen_fd_, SHUT_RDWR);
    for (int fd : open_fds_) shutdown(fd, SHUT_RDWR);
  }
  released_.SignalAll();
  if (accept_thread_.joinable()) accept_thread_.join();
  std::vector<std::thread> threads;
  {
    MutexLock lock(&mu_);
    threads.swap(threads_);
  }
  for (std::thread& t : threads) t.join();
  if (listen_fd_ >= 0) close(listen_fd_);
  listen_fd_ = -1;
}

void ReplayServer::AcceptLoop() {
  for (;;) {
    int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    MutexLock lock(&mu_);
    if (stopping_) {
      if (fd >= 0) close(fd);
      return;
    }
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      std::fprintf(stderr, "accept: %s\n", strerror(errno));
      return;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    open_fds_.insert(fd);
    threads_.emplace_back([this, fd] {
      ServeConnection(fd);
      MutexLock lock(&mu_);
      open_fds_.erase(fd);
      close(fd);
    });
  }
}

// Requests on one keep-alive connection, in order.
void ReplayServer::ServeConnection(int fd) {
  std::string buffer;
  char chunk[16384];
  for (;;) {
    size_t end;
    while ((end = buffer.find("\r\n\r\n")) == std::string::npos) {
      if (buffer.size() > (1 << 20)) return;
      ssize_t n = read(fd, chunk, sizeof(chunk));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return;
      buffer.append(chunk, static_cast<size_t>(n));
    }
    Request request;
    size_t body_length = 0;
    if (!ParseHead(absl::string_view(buffer).substr(0, end), &request,
                   &body_length)) {
      WriteStatus(fd, 400, "BadRequest", "malformed request", true);
      return;
    }
    buffer.erase(0, end + 4);
    while (buffer.size() < body_length) {
      ssize_t n = read(fd, chunk, sizeof(chunk));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return;
      buffer.append(chunk, static_cast<size_t>(n));
    }
    buffer.erase(0, body_length);
    if (!Handle(fd, request) || request.close) return;
  }
}

// Returns whether the connection can carry another request.
bool ReplayServer::Handle(int fd, const Request& request) {
  const std::string& path = request.path;
  if (request.method == "POST" && path == "/start-updates") {
    int64_t epoch;
    {
      MutexLock lock(&mu_);
      epoch = ++release_epoch_;
    }
    released_.SignalAll();
    return WriteJson(fd, 200, absl::StrCat("{\"released\":", epoch, "}"),
                     request.close);
  }
  if (request.method != "GET") {
    return WriteStatus(fd, 405, "MethodNotAllowed",
                       absl::StrCat(request.method, " is not supported"),
                       request.close);
  }
  if (path == "/version") {
    return WriteJson(fd, 200,
                     "{\"major\":\"1\",\"minor\":\"26\",\"gitVersion\":"
                     "\"v1.26.15\",\"platform\":\"linux/amd64\"}",
                     request.close);
  }
  if (path == "/api") {
    return WriteJson(
        fd, 200,
        absl::StrCat("{\"kind\":\"APIVersions\",\"versions\":[\"v1\"],"
                     "\"serverAddressByClientCIDRs\":[{\"clientCIDR\":"
                     "\"0.0.0.0/0\",\"serverAddress\":\"127.0.0.1:",
                     port_, "\"}]}"),
        request.close);
  }
  if (path == "/apis") {
    return WriteJson(
        fd, 200,
        "{\"kind\":\"APIGroupList\",\"apiVersion\":\"v1\",\"groups\":[]}",
        request.close);
  }
  if (path == "/api/v1") {
    return WriteJson(
        fd, 200,
        "{\"kind\":\"APIResourceList\",\"groupVersion\":\"v1\",\"resources\":"
        "[{\"name\":\"pods\",\"singularName\":\"pod\",\"namespaced\":true,"
        "\"kind\":\"Pod\",\"verbs\":[\"get\",\"list\",\"watch\"],"
        "\"shortNames\":[\"po\"]}]}",
        request.close);
  }
  std::string namespace_;
  if (path == "/api/v1/pods") {
    // Every namespace.
  } else {
    std::vector<absl::string_view> parts =
        absl::StrSplit(path, '/', absl::SkipEmpty());
    if (parts.size() != 5 || parts[0] != "api" || parts[1] != "v1" ||
        parts[2] != "namespaces" || parts[4] != "pods") {
      return WriteStatus(fd, 404, "NotFound",
                         absl::StrCat("the server could not find the "
                                      "requested resource ",
                                      path),
                         request.close);
    }
    namespace_ = std::string(parts[3]);
  }
  std::string watch = request.Param("watch");
  if (watch == "true" || watch == "1") {
    return ServeWatch(fd, request, namespace_);
  }
  return ServeList(fd, request, namespace_);
}

const std::vector<int64_t>& ReplayServer::Scope(
    const std::string& namespace_) const {
  static const std::vector<int64_t>* const kEmpty = new std::vector<int64_t>;
  const std::vector<int64_t>* order = corpus_->ScopeOrder(namespace_);
  return order == nullptr ? *kEmpty : *order;
}

bool ReplayServer::ServeList(int fd, const Request& request,
                             const std::string& namespace_) {
  const std::vector<int64_t>& order = Scope(namespace_);
  const int64_t size = static_cast<int64_t>(order.size());
  const std::string rv = request.Param("resourceVersion");
  const std::string token = request.Param("continue");
  int64_t limit = 0;
  if (!request.Param("limit").empty() &&
      (!absl::SimpleAtoi(request.Param("limit"), &limit) || limit < 0)) {
    return WriteStatus(fd, 400, "BadRequest", "limit must be an integer",
                       request.close);
  }
  int64_t begin = 0;
  if (!token.empty()) {
    begin = DecodeContinue(token, namespace_);
    if (begin < 0) {
      return WriteStatus(fd, 400, "BadRequest", "continue key is not valid",
                         request.close);
    }
  } else if (rv == "0") {
    // The watch cache answers resourceVersion=0 whole, whatever the limit.
    limit = 0;
  }
  int64_t end = size;
  if (limit > 0) end = std::min(size, begin + limit);
  begin = std::min(begin, end);

  std::string meta = absl::StrCat("{\"resourceVersion\":\"",
                                  corpus_->list_resource_version(), "\"");
  if (end < size) {
    absl::StrAppend(&meta, ",\"continue\":\"",
                    EncodeContinue(corpus_->KeyOf(order[end - 1])),
                    "\",\"remainingItemCount\":", size - end);
  }
  meta.push_back('}');
  std::string head = absl::StrCat(
      "{\"kind\":\"PodList\",\"apiVersion\":\"v1\",\"metadata\":", meta,
      ",\"items\":[");
  constexpr std::string_view kTail = "]}";
  size_t length = head.size() + kTail.size();
  for (int64_t p = begin; p < end; ++p) {
    length += corpus_->item(order[p]).size();
  }
  if (end > begin) --length;  // the first item's comma
  std::string http = absl::StrCat(
      "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
      "Content-Length: ",
      length, "\r\n", request.close ? "Connection: close\r\n" : "", "\r\n");
  std::vector<iovec> iov;
  iov.reserve(static_cast<size_t>(end - begin) + 3);
  iov.push_back(Iov(http));
  iov.push_back(Iov(head));
  for (int64_t p = begin; p < end; ++p) {
    std::string_view item = corpus_->item(order[p]);
    if (p == begin) item.remove_prefix(1);
    iov.push_back(Iov(item));
  }
  iov.push_back(Iov(kTail));
  return WriteV(fd, &iov);
}

std::string ReplayServer::EncodeContinue(const std::string& last_key) const {
  std::string json = absl::StrCat(
      "{\"v\":\"meta.k8s.io/v1\",\"rv\":", corpus_->list_resource_version(),
      ",\"start\":\"", last_key, "\\u0000\"}");
  return absl::WebSafeBase64Escape(json);
}

// The position after the token's start key, or -1 if it is not ours.
int64_t ReplayServer::DecodeContinue(const std::string& token,
                                     const std::string& namespace_) const {
  std::string json;
  if (!absl::WebSafeBase64Unescape(token, &json)) return -1;
  rapidjson::Document doc;
  doc.Parse(json.c_str(), json.size());
  if (doc.HasParseError() || !doc.IsObject() || !doc.HasMember("v") ||
      !doc["v"].IsString() ||
      std::string_view(doc["v"].GetString()) != "meta.k8s.io/v1" ||
      !doc.HasMember("start") || !doc["start"].IsString()) {
    return -1;
  }
  std::string_view start(doc["start"].GetString(),
                         doc["start"].GetStringLength());
  if (start.empty() || start.back() != '\0') return -1;
  start.remove_suffix(1);
  int64_t position = corpus_->PositionOf(namespace_, start);
  return position < 0 ? -1 : position + 1;
}

// Waits until the updates are released after `epoch` (never, for a
// negative epoch), the deadline passes, or the peer closes. Returns false
// if the peer closed or the server is stopping. Looks at the socket every 100
// ms; a release wakes it at once.
bool ReplayServer::Wait(int fd, absl::Time deadline, int64_t epoch) {
  for (;;) {
    {
      MutexLock lock(&mu_);
      if (stopping_) return false;
      if (epoch >= 0 && release_epoch_ > epoch) return true;
      absl::Time now = absl::Now();
      if (now >= deadline) return true;
      released_.WaitWithDeadline(
          &mu_, std::min(deadline, now + absl::Milliseconds(100)));
      if (epoch >= 0 && release_epoch_ > epoch) return true;
    }
    if (PeerClosed(fd)) return false;
  }
}

bool ReplayServer::ServeWatch(int fd, const Request& request,
                              const std::string& namespace_) {
  int64_t epoch_at_connect;
  {
    MutexLock lock(&mu_);
    epoch_at_connect = release_epoch_;
  }
  const int64_t n = corpus_->list_resource_version();
  const int64_t last_rv = n + corpus_->updates();
  const std::string rv = request.Param("resourceVersion");
  const bool bookmarks = request.Param("allowWatchBookmarks") == "true" ||
                         request.Param("allowWatchBookmarks") == "1";
  absl::Time deadline = absl::InfiniteFuture();
  if (!request.Param("timeoutSeconds").empty()) {
    int64_t seconds = 0;
    if (!absl::SimpleAtoi(request.Param("timeoutSeconds"), &seconds) ||
        seconds < 0) {
      return WriteStatus(fd, 400, "BadRequest",
                         "timeoutSeconds must be an integer", request.close);
    }
    if (seconds > 0) deadline = absl::Now() + absl::Seconds(seconds);
  }
  int64_t from = 0;
  const bool initial_events = rv.empty() || rv == "0";
  if (!initial_events && !absl::SimpleAtoi(rv, &from)) {
    return WriteStatus(fd, 400, "BadRequest",
                       absl::StrCat("invalid resourceVersion ", rv),
                       request.close);
  }
  std::string head = absl::StrCat(
      "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
      "Transfer-Encoding: chunked\r\n",
      request.close ? "Connection: close\r\n" : "", "\r\n");
  if (!WriteAll(fd, head).ok()) return false;

  int ns_index = -1;
  if (!namespace_.empty()) {
    const auto& all = corpus_->namespaces();
    auto it = std::find(all.begin(), all.end(), namespace_);
    ns_index = it == all.end() ? -2 : static_cast<int>(it - all.begin());
  }
  auto in_scope = [&](int64_t pod) {
    return ns_index == -1 || corpus_->namespace_of(pod) == ns_index;
  };

  if (!initial_events && from < n) {
    std::string expired = absl::StrCat(
        "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"apiVersion\":"
        "\"v1\",\"metadata\":{},\"status\":\"Failure\",\"message\":\"too "
        "old resource version: ",
        from, " (", n, ")\",\"reason\":\"Expired\",\"code\":410}}\n");
    return WriteChunk(fd, {expired}) && WriteChunk(fd, {});
  }
  if (initial_events) {
    const std::vector<int64_t>& order = Scope(namespace_);
    std::vector<std::string> lines;
    for (size_t p = 0; p < order.size(); ++p) {
      lines.push_back(absl::StrCat(
          "{\"type\":\"ADDED\",\"object\":",
          absl::string_view(corpus_->item(order[p])).substr(1), "}\n"));
      if (lines.size() == kEventsPerChunk || p + 1 == order.size()) {
        if (!WriteChunk(fd, {lines.begin(), lines.end()})) return false;
        lines.clear();
      }
    }
    from = n;
  }
  int64_t next = std::min(from, last_rv) - n;  // the next update to send
  if (next == 0 && corpus_->updates() > 0) {
    // Hold the history until the harness asks for it.
    if (!Wait(fd, deadline, epoch_at_connect)) return false;
  }
  std::vector<std::string_view> batch;
  size_t batch_bytes = 0;
  for (int64_t k = next; k < corpus_->updates() && absl::Now() < deadline;
       ++k) {
    if (!in_scope(corpus_->event_pod(k))) continue;
    batch.push_back(corpus_->event(k));
    batch_bytes += batch.back().size();
    if (batch.size() == kEventsPerChunk || batch_bytes >= kChunkBytes) {
      if (!WriteChunk(fd, batch)) return false;
      batch.clear();
      batch_bytes = 0;
    }
  }
  if (!batch.empty() && !WriteChunk(fd, batch)) return false;

  // Caught up: bookmarks until the timeout or the client goes.
  const std::string bookmark = absl::StrCat(
      "{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"Pod\",\"apiVersion\":"
      "\"v1\",\"metadata\":{\"resourceVersion\":\"",
      last_rv, "\"}}}\n");
  for (;;) {
    if (bookmarks && !WriteChunk(fd, {bookmark})) return false;
    absl::Time wake =
        std::min(deadline, absl::Now() + options_.bookmark_interval);
    if (!Wait(fd, wake, /*epoch=*/-1)) return false;
    if (absl::Now() >= deadline) return WriteChunk(fd, {});
  }
}

}  // namespace kcr::bench
