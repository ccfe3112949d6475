#include "apiserver/endpoints/pod_stream.h"

#include <string>

#include "gtest/gtest.h"

namespace kcr {
namespace apiserver {
namespace {

TEST(WebSocketTest, AcceptIsRfc6455s) {
  // RFC 6455 section 1.3's example.
  EXPECT_EQ(WebSocketAccept("dGhlIHNhbXBsZSBub25jZQ=="),
            "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
}

TEST(WebSocketTest, FramesCarryTheirLengthInOneOfThreeSizes) {
  EXPECT_EQ(WebSocketFrame(2, "\x03hi"), std::string("\x82\x03\x03hi", 5));
  EXPECT_EQ(WebSocketFrame(8, ""), std::string("\x88\x00", 2));
  const std::string medium(126, 'x');
  std::string frame = WebSocketFrame(1, medium);
  EXPECT_EQ(frame.substr(0, 4), std::string("\x81\x7e\x00\x7e", 4));
  EXPECT_EQ(frame.size(), 4 + medium.size());
  const std::string large(70000, 'y');
  frame = WebSocketFrame(2, large);
  EXPECT_EQ(frame.substr(0, 10),
            std::string("\x82\x7f\x00\x00\x00\x00\x00\x01\x11\x70", 10));
  EXPECT_EQ(frame.size(), 10 + large.size());
}

}  // namespace
}  // namespace apiserver
}  // namespace kcr
