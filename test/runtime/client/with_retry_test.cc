#include "runtime/client/with_retry.h"

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace kcr::client {
namespace {

TEST(WithRetryTest, TooManyRequestsWaitsRetryAfterOrTheDefault) {
  WithRetry retry(RetryOptions{});
  EXPECT_EQ(retry.AfterResponse(429, " 3 ", /*idempotent=*/false),
            absl::Seconds(3));
  EXPECT_EQ(retry.AfterResponse(429, "", false), absl::Seconds(1));
  EXPECT_EQ(retry.AfterResponse(429, "soon", false), absl::Seconds(1));
}

TEST(WithRetryTest, ServerErrorWithRetryAfterIsRetriedEvenIfNotIdempotent) {
  WithRetry retry(RetryOptions{});
  EXPECT_EQ(retry.AfterResponse(503, "2", /*idempotent=*/false),
            absl::Seconds(2));
  EXPECT_EQ(retry.AfterResponse(503, "", false), std::nullopt);
}

TEST(WithRetryTest, ServerErrorsBackOffExponentiallyForIdempotentRequests) {
  RetryOptions options;
  options.max_backoff_retries = 4;
  options.initial_backoff = absl::Seconds(2);
  options.max_backoff = absl::Seconds(5);
  WithRetry retry(options);
  EXPECT_EQ(retry.AfterResponse(500, "", true), absl::Seconds(2));
  EXPECT_EQ(retry.AfterResponse(502, "", true), absl::Seconds(4));
  EXPECT_EQ(retry.AfterTransportError(absl::UnavailableError("reset"), true,
                                      /*permanent=*/false),
            absl::Seconds(5));
  EXPECT_EQ(retry.AfterResponse(500, "", true), absl::Seconds(5));
  EXPECT_EQ(retry.AfterResponse(500, "", true), std::nullopt);
}

TEST(WithRetryTest, AnswersThatAreResultsAreNotRetried) {
  WithRetry retry(RetryOptions{});
  EXPECT_EQ(retry.AfterResponse(200, "", true), std::nullopt);
  EXPECT_EQ(retry.AfterResponse(404, "1", true), std::nullopt);
  EXPECT_EQ(retry.AfterResponse(500, "", /*idempotent=*/false), std::nullopt);
  EXPECT_EQ(retry.AfterTransportError(absl::UnavailableError("x"),
                                      /*idempotent=*/false, false),
            std::nullopt);
  EXPECT_EQ(retry.AfterTransportError(absl::UnavailableError("tls"), true,
                                      /*permanent=*/true),
            std::nullopt);
}

TEST(WithRetryTest, RetryAfterRetriesAreCountedApart) {
  RetryOptions options;
  options.max_retry_after_retries = 2;
  options.max_backoff_retries = 1;
  WithRetry retry(options);
  EXPECT_TRUE(retry.AfterResponse(429, "", true).has_value());
  EXPECT_TRUE(retry.AfterResponse(500, "", true).has_value());
  EXPECT_TRUE(retry.AfterResponse(429, "", true).has_value());
  EXPECT_EQ(retry.AfterResponse(429, "", true), std::nullopt);
  EXPECT_EQ(retry.AfterResponse(500, "", true), std::nullopt);
}

}  // namespace
}  // namespace kcr::client
