// TestClient: a minimal synchronous HTTP/1.1 client for tests of the local
// API server (plain HTTP on loopback). One request per call on a fresh
// connection; WatchStream reads a chunked watch line by line. Reads time out
// after `timeout` so a broken server fails a test instead of hanging it.
#ifndef KCR_TEST_APISERVER_TEST_CLIENT_H_
#define KCR_TEST_APISERVER_TEST_CLIENT_H_

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "rapidjson/document.h"

namespace kcr {
namespace apiserver {

struct TestResponse {
  int status = 0;  // 0: the request failed (see error)
  std::string error;
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;

  std::string Header(const std::string& name) const;
  // The body parsed as JSON (a null document when it is not JSON).
  rapidjson::Document Json() const;
  // A string at a JSON pointer of the body, or "".
  std::string Str(const char* pointer) const;
  // An integer at a JSON pointer of the body, or -1.
  int64_t Int(const char* pointer) const;
};

class WatchStream {
 public:
  ~WatchStream();
  // Status code of the watch response.
  int status() const { return status_; }
  // The next line of the stream (one event), or nullopt when the stream
  // ended or nothing came within the timeout.
  std::optional<std::string> Next();
  // Whether the server ended the stream (zero-length chunk or close).
  bool ended() const { return ended_; }

 private:
  friend class TestClient;
  struct Impl;
  std::unique_ptr<Impl> impl_;
  int status_ = 0;
  bool ended_ = false;
  std::string pending_;
};

class TestClient {
 public:
  TestClient(std::string host, int port,
             absl::Duration timeout = absl::Seconds(10));

  // Extra request headers for every request (e.g. Authorization).
  void SetHeader(const std::string& name, const std::string& value) {
    headers_[name] = value;
  }

  TestResponse Do(const std::string& method, const std::string& target,
                  const std::string& body = "",
                  const std::string& content_type = "application/json",
                  const std::map<std::string, std::string>& headers = {});
  TestResponse Get(const std::string& target,
                   const std::map<std::string, std::string>& headers = {}) {
    return Do("GET", target, "", "", headers);
  }
  TestResponse Post(const std::string& target, const std::string& body) {
    return Do("POST", target, body);
  }
  TestResponse Put(const std::string& target, const std::string& body) {
    return Do("PUT", target, body);
  }
  TestResponse Patch(const std::string& target, const std::string& body,
                     const std::string& content_type) {
    return Do("PATCH", target, body, content_type);
  }
  TestResponse Delete(const std::string& target, const std::string& body = "") {
    return Do("DELETE", target, body);
  }

  // Opens a watch (GET target) and returns the stream after the headers.
  std::unique_ptr<WatchStream> Watch(
      const std::string& target,
      const std::map<std::string, std::string>& headers = {});

 private:
  std::string host_;
  int port_;
  absl::Duration timeout_;
  std::map<std::string, std::string> headers_;
};

}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_TEST_APISERVER_TEST_CLIENT_H_
