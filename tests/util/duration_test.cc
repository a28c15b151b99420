// Unit tests (no database) for util::parse_duration and util::format_duration.
#include "util/duration.h"

#include <gtest/gtest.h>

#include <chrono>
#include <random>
#include <stdexcept>
#include <string>

namespace quick::util {
namespace {

using namespace std::chrono;

TEST(ParseDuration, Units) {
  EXPECT_EQ(parse_duration("250ms"), microseconds(250000));
  EXPECT_EQ(parse_duration("1.5s"), microseconds(1500000));
  EXPECT_EQ(parse_duration("2m"), microseconds(120000000));
  EXPECT_EQ(parse_duration("1h"), microseconds(3600000000LL));
  EXPECT_EQ(parse_duration("30us"), microseconds(30));
  EXPECT_EQ(parse_duration("0s"), microseconds(0));
  EXPECT_EQ(parse_duration("0.5ms"), microseconds(500));
  EXPECT_EQ(parse_duration("10min"), minutes(10));
  EXPECT_EQ(parse_duration("168h"), hours(168));
  EXPECT_EQ(parse_duration("1e3ms"), seconds(1));
}

// Returns the message of the std::invalid_argument parse_duration throws, or "" if none.
std::string rejection(const std::string& text) {
  try {
    parse_duration(text);
  } catch (const std::invalid_argument& error) {
    return error.what();
  }
  return "";
}

TEST(ParseDuration, RejectsWithMessagesNamingTheInput) {
  for (const std::string bad :
       {"10", "abc", "-1s", "5 parsecs", "", "ms", "1.5", "1x", "1 s", "-0.5ms", "infs", "nanms", "s10"}) {
    const std::string message = rejection(bad);
    EXPECT_FALSE(message.empty()) << "accepted '" << bad << "'";
    EXPECT_NE(message.find("'" + bad + "'"), std::string::npos) << message;
  }
}

TEST(ParseDuration, MessagesSayWhatIsWrong) {
  EXPECT_NE(rejection("10").find("no unit"), std::string::npos) << rejection("10");
  EXPECT_NE(rejection("5 parsecs").find("unknown unit"), std::string::npos) << rejection("5 parsecs");
}

// A value too large for microseconds in 64 bits must be rejected, not wrapped into a negative
// (or otherwise wrong) duration.
TEST(ParseDuration, HugeValuesAreRejectedNotWrapped) {
  for (const std::string huge : {"1e30h", "1e300s", "9999999999999h", "1e16s"}) {
    microseconds parsed{0};
    bool threw = false;
    try {
      parsed = parse_duration(huge);
    } catch (const std::invalid_argument&) {
      threw = true;
    }
    EXPECT_TRUE(threw) << huge << " parsed as " << parsed.count() << "us";
  }
}

TEST(FormatDuration, ShortestExactRendering) {
  EXPECT_EQ(format_duration(microseconds(0)), "0s");
  EXPECT_EQ(format_duration(microseconds(30)), "30us");
  EXPECT_EQ(format_duration(microseconds(1500000)), "1500ms");
  EXPECT_EQ(format_duration(microseconds(2000000)), "2s");
  EXPECT_EQ(format_duration(microseconds(90000000)), "90s");
  EXPECT_EQ(format_duration(minutes(2)), "2m");
  EXPECT_EQ(format_duration(hours(1)), "1h");
  EXPECT_EQ(format_duration(minutes(90)), "90m");
  EXPECT_EQ(format_duration(microseconds(1001)), "1001us");
}

TEST(FormatDuration, RoundTrips) {
  for (long long us : {0LL, 1LL, 999LL, 1000LL, 1001LL, 250000LL, 1500000LL, 59000000LL, 60000000LL, 3599000000LL,
                       3600000000LL, 86400000000LL, 604800000000LL, 123456789012LL}) {
    const microseconds d(us);
    EXPECT_EQ(parse_duration(format_duration(d)), d) << format_duration(d);
  }
  std::mt19937_64 random(3);
  std::uniform_int_distribution<long long> dist(0, 10LL * 86400 * 1000000);
  for (int i = 0; i < 2000; ++i) {
    const microseconds d(dist(random));
    ASSERT_EQ(parse_duration(format_duration(d)), d) << format_duration(d);
    // Also round values, which format with bigger units.
    const microseconds ms(d.count() / 1000 * 1000), s(d.count() / 1000000 * 1000000);
    ASSERT_EQ(parse_duration(format_duration(ms)), ms) << format_duration(ms);
    ASSERT_EQ(parse_duration(format_duration(s)), s) << format_duration(s);
  }
}

}  // namespace
}  // namespace quick::util
