#include "runtime/events/event_correlator.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rapidjson/document.h"
#include "test/fakes/fake_clock.h"

namespace kcr::events {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

class EventCorrelatorTest : public ::testing::Test {
 protected:
  EventCorrelator NewCorrelator(CorrelatorOptions options = {}) {
    options.clock = &clock_;
    return EventCorrelator(options);
  }

  Event MakeEvent(std::string object, std::string reason, std::string message,
                  std::string type = "Normal") {
    Event e;
    e.namespace_ = "default";
    e.involved_object.kind = "ConfigMap";
    e.involved_object.api_version = "v1";
    e.involved_object.namespace_ = "default";
    e.involved_object.name = object;
    e.involved_object.uid = "uid-" + object;
    e.name = NewEventName(object, clock_.Now());
    e.reason = std::move(reason);
    e.message = std::move(message);
    e.type = std::move(type);
    e.source = {"test-controller", "host-a"};
    e.first_timestamp = e.last_timestamp = clock_.Now();
    return e;
  }

  // What the server would answer for a write: the name, a new
  // resourceVersion.
  void Written(EventCorrelator& c, const CorrelateResult& r,
               const std::string& rv) {
    Event state = r.event;
    state.resource_version = rv;
    c.UpdateState(r.key, state);
  }

  testing::FakeClock clock_;
};

TEST_F(EventCorrelatorTest, FirstEventPassesAsIs) {
  EventCorrelator c = NewCorrelator();
  Event e = MakeEvent("cm", "Synced", "all good");
  CorrelateResult r = c.Correlate(e);
  EXPECT_FALSE(r.skip);
  EXPECT_TRUE(r.patch.empty());
  EXPECT_EQ(r.event.name, e.name);
  EXPECT_EQ(r.event.count, 1);
  EXPECT_EQ(r.event.message, "all good");
}

TEST_F(EventCorrelatorTest, RepeatIncrementsCountAsPatch) {
  EventCorrelator c = NewCorrelator();
  CorrelateResult first = c.Correlate(MakeEvent("cm", "Synced", "all good"));
  Written(c, first, "101");
  const absl::Time first_time = clock_.Now();

  clock_.Advance(absl::Seconds(30));
  CorrelateResult second = c.Correlate(MakeEvent("cm", "Synced", "all good"));
  EXPECT_FALSE(second.skip);
  EXPECT_EQ(second.event.name, first.event.name);
  EXPECT_EQ(second.event.resource_version, "101");
  EXPECT_EQ(second.event.count, 2);
  EXPECT_EQ(second.event.first_timestamp, first_time);
  EXPECT_EQ(second.event.last_timestamp, clock_.Now());
  rapidjson::Document patch;
  patch.Parse(second.patch.c_str());
  ASSERT_TRUE(patch.IsObject()) << second.patch;
  EXPECT_EQ(patch["count"].GetInt(), 2);
  EXPECT_STREQ(patch["lastTimestamp"].GetString(), "2023-11-14T22:13:50Z");
  EXPECT_STREQ(patch["message"].GetString(), "all good");
  Written(c, second, "102");

  CorrelateResult third = c.Correlate(MakeEvent("cm", "Synced", "all good"));
  EXPECT_EQ(third.event.count, 3);
  EXPECT_EQ(third.event.resource_version, "102");
}

TEST_F(EventCorrelatorTest, DifferentReasonOrObjectIsANewEvent) {
  EventCorrelator c = NewCorrelator();
  CorrelateResult a = c.Correlate(MakeEvent("cm", "Synced", "m"));
  Written(c, a, "1");
  EXPECT_TRUE(c.Correlate(MakeEvent("cm", "Failed", "m")).patch.empty());
  EXPECT_TRUE(c.Correlate(MakeEvent("other", "Synced", "m")).patch.empty());
  EXPECT_TRUE(
      c.Correlate(MakeEvent("cm", "Synced", "m", "Warning")).patch.empty());
}

TEST_F(EventCorrelatorTest, RepeatAfterTheIntervalStartsANewEvent) {
  EventCorrelator c = NewCorrelator();
  CorrelateResult first = c.Correlate(MakeEvent("cm", "Synced", "m"));
  Written(c, first, "1");
  clock_.Advance(absl::Minutes(10) + absl::Seconds(1));
  CorrelateResult later = c.Correlate(MakeEvent("cm", "Synced", "m"));
  EXPECT_TRUE(later.patch.empty());
  EXPECT_EQ(later.event.count, 1);
  EXPECT_NE(later.event.name, first.event.name);
}

TEST_F(EventCorrelatorTest, TenSimilarEventsAreCombined) {
  EventCorrelator c = NewCorrelator();
  for (int i = 0; i < 9; ++i) {
    CorrelateResult r =
        c.Correlate(MakeEvent("cm", "Failed", absl::StrCat("attempt ", i)));
    EXPECT_EQ(r.event.message, absl::StrCat("attempt ", i));
    EXPECT_TRUE(r.patch.empty());
    Written(c, r, absl::StrCat(i));
  }
  CorrelateResult tenth = c.Correlate(MakeEvent("cm", "Failed", "attempt 9"));
  EXPECT_EQ(tenth.event.message, "(combined from similar events): attempt 9");
  EXPECT_TRUE(tenth.patch.empty());
  EXPECT_EQ(tenth.event.count, 1);
  EXPECT_THAT(tenth.event.name, StartsWith("cm."));
  Written(c, tenth, "50");

  // Later similar events count on the combined Event.
  clock_.Advance(absl::Seconds(1));
  CorrelateResult eleventh =
      c.Correlate(MakeEvent("cm", "Failed", "attempt 10"));
  EXPECT_EQ(eleventh.event.name, tenth.event.name);
  EXPECT_EQ(eleventh.event.count, 2);
  EXPECT_THAT(eleventh.patch,
              HasSubstr("(combined from similar events): attempt 10"));

  // Another reason is not similar.
  EXPECT_EQ(c.Correlate(MakeEvent("cm", "Synced", "x")).event.message, "x");
}

TEST_F(EventCorrelatorTest, SimilarEventsSpreadOverTheIntervalAreNotCombined) {
  EventCorrelator c = NewCorrelator();
  for (int i = 0; i < 20; ++i) {
    CorrelateResult r =
        c.Correlate(MakeEvent("cm", "Failed", absl::StrCat("attempt ", i)));
    EXPECT_EQ(r.event.message, absl::StrCat("attempt ", i)) << i;
    clock_.Advance(absl::Minutes(11));
  }
}

TEST_F(EventCorrelatorTest, SpamFilterDropsPastTheBurstAndRefills) {
  EventCorrelator c = NewCorrelator();
  for (int i = 0; i < 25; ++i) {
    EXPECT_FALSE(
        c.Correlate(MakeEvent("cm", absl::StrCat("Reason", i), "m")).skip)
        << i;
  }
  EXPECT_TRUE(c.Correlate(MakeEvent("cm", "Reason25", "m")).skip);
  // Another object has its own bucket.
  EXPECT_FALSE(c.Correlate(MakeEvent("other", "Reason25", "m")).skip);
  // One token every five minutes.
  clock_.Advance(absl::Minutes(4));
  EXPECT_TRUE(c.Correlate(MakeEvent("cm", "Reason26", "m")).skip);
  clock_.Advance(absl::Minutes(1));
  EXPECT_FALSE(c.Correlate(MakeEvent("cm", "Reason27", "m")).skip);
  EXPECT_TRUE(c.Correlate(MakeEvent("cm", "Reason28", "m")).skip);
}

TEST_F(EventCorrelatorTest, SpamFilterOptions) {
  CorrelatorOptions options;
  options.spam_burst = 2;
  EventCorrelator c = NewCorrelator(options);
  EXPECT_FALSE(c.Correlate(MakeEvent("cm", "A", "m")).skip);
  EXPECT_FALSE(c.Correlate(MakeEvent("cm", "B", "m")).skip);
  EXPECT_TRUE(c.Correlate(MakeEvent("cm", "C", "m")).skip);
}

TEST_F(EventCorrelatorTest, NamesAreUniqueWhenTheClockStandsStill) {
  EXPECT_NE(NewEventName("x", clock_.Now()), NewEventName("x", clock_.Now()));
  EXPECT_THAT(NewEventName("web", absl::FromUnixNanos(0x1234)),
              StartsWith("web."));
}

}  // namespace
}  // namespace kcr::events
