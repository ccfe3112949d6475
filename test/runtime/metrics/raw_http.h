// RawHttp: sends bytes to a loopback port and returns everything the
// server answers until it closes, for tests of small HTTP servers.
#ifndef KCR_TEST_RUNTIME_METRICS_RAW_HTTP_H_
#define KCR_TEST_RUNTIME_METRICS_RAW_HTTP_H_

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

namespace kcr::metrics::testing {

// A connected socket to 127.0.0.1:port, or -1.
inline int Connect(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

inline std::string ReadAll(int fd) {
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = read(fd, buf, sizeof(buf))) > 0) out.append(buf, n);
  return out;
}

inline std::string RawHttp(int port, const std::string& request) {
  const int fd = Connect(port);
  if (fd < 0) return "<connect failed>";
  (void)!write(fd, request.data(), request.size());
  std::string out = ReadAll(fd);
  close(fd);
  return out;
}

inline std::string Get(int port, const std::string& target) {
  return RawHttp(port,
                 "GET " + target + " HTTP/1.1\r\nHost: localhost\r\n\r\n");
}

// The body of a whole answer.
inline std::string Body(const std::string& answer) {
  const size_t end = answer.find("\r\n\r\n");
  return end == std::string::npos ? "" : answer.substr(end + 4);
}

}  // namespace kcr::metrics::testing

#endif  // KCR_TEST_RUNTIME_METRICS_RAW_HTTP_H_
