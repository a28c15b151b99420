// Unit tests (no database) for the text conversions in store/pg_values.
#include "store/pg_values.h"

#include <gtest/gtest.h>

#include <chrono>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace quick::store {
namespace {

using namespace std::chrono;

// Parses a one-dimensional Postgres array literal the way array_in does for quoted elements
// (enough to check that array_literal round-trips).
std::vector<std::string> parse_array(const std::string& literal) {
  std::vector<std::string> out;
  if (literal.size() < 2 || literal.front() != '{' || literal.back() != '}')
    throw std::runtime_error("not an array: " + literal);
  std::size_t i = 1;
  if (literal[i] == '}') return out;
  while (true) {
    if (literal[i] != '"') throw std::runtime_error("unquoted element at " + std::to_string(i) + " in " + literal);
    ++i;
    std::string element;
    while (literal[i] != '"') {
      if (literal[i] == '\\') ++i;
      if (i >= literal.size() - 1) throw std::runtime_error("unterminated element in " + literal);
      element += literal[i++];
    }
    ++i;
    out.push_back(element);
    if (literal[i] == '}') {
      if (i != literal.size() - 1) throw std::runtime_error("trailing text in " + literal);
      return out;
    }
    if (literal[i] != ',') throw std::runtime_error("expected , at " + std::to_string(i) + " in " + literal);
    ++i;
  }
}

TEST(ArrayLiteral, Empty) { EXPECT_EQ(array_literal(std::vector<std::string>{}), "{}"); }

TEST(ArrayLiteral, QuotesEveryElement) {
  EXPECT_EQ(array_literal(std::vector<std::string>{"a", "b"}), R"({"a","b"})");
  EXPECT_EQ(array_literal(std::vector<std::string>{"NULL"}), R"({"NULL"})");  // the string, not NULL
}

TEST(ArrayLiteral, EscapesQuotesAndBackslashes) {
  EXPECT_EQ(array_literal(std::vector<std::string>{R"(b"c)"}), R"({"b\"c"})");
  EXPECT_EQ(array_literal(std::vector<std::string>{R"(a\b)"}), R"({"a\\b"})");
  EXPECT_EQ(array_literal(std::vector<std::string>{R"(\")"}), R"({"\\\""})");
  EXPECT_EQ(array_literal(std::vector<std::string>{R"(\)"}), R"({"\\"})");
}

TEST(ArrayLiteral, CommasBracesSpacesAndEmptyStringsStayInsideQuotes) {
  EXPECT_EQ(array_literal(std::vector<std::string>{"a,b", "{x}", "", " sp "}), R"({"a,b","{x}",""," sp "})");
}

TEST(ArrayLiteral, UnicodePassesThrough) {
  EXPECT_EQ(array_literal(std::vector<std::string>{"zoë", "日本", "🙂"}), "{\"zoë\",\"日本\",\"🙂\"}");
}

TEST(ArrayLiteral, RoundTrips) {
  const std::vector<std::string> tricky = {"",
                                           "a",
                                           "a,b",
                                           "{",
                                           "}",
                                           "{}",
                                           "\"",
                                           "\\",
                                           "\\\"",
                                           "\"\\",
                                           "NULL",
                                           "null",
                                           " ",
                                           "\t\n",
                                           "zoë 日本 🙂",
                                           "a\\,b\"c{d}e",
                                           std::string(1000, '"')};
  EXPECT_EQ(parse_array(array_literal(tricky)), tricky);
  for (const auto& one : tricky)
    EXPECT_EQ(parse_array(array_literal(std::vector<std::string>{one})), std::vector<std::string>{one});
}

TEST(ArrayLiteral, Booleans) {
  EXPECT_EQ(array_literal(std::vector<bool>{}), "{}");
  EXPECT_EQ(array_literal(std::vector<bool>{true}), "{t}");
  EXPECT_EQ(array_literal(std::vector<bool>{true, false, true}), "{t,f,t}");
}

TEST(IntervalText, Microseconds) {
  EXPECT_EQ(interval_text(microseconds(0)), "0 microseconds");
  EXPECT_EQ(interval_text(microseconds(1)), "1 microseconds");
  EXPECT_EQ(interval_text(microseconds(hours(24))), "86400000000 microseconds");
  EXPECT_EQ(interval_text(microseconds(-250)), "-250 microseconds");
}

// Milliseconds stay milliseconds: converted to microseconds, 18446744073709552 ms would wrap.
TEST(IntervalText, Milliseconds) {
  EXPECT_EQ(interval_text(milliseconds(1500)), "1500 milliseconds");
  EXPECT_EQ(interval_text(milliseconds(hours(24))), "86400000 milliseconds");
  EXPECT_EQ(interval_text(milliseconds(18446744073709552LL)), "18446744073709552 milliseconds");
}

TEST(ParseOutcome, KnownValues) {
  EXPECT_EQ(parse_outcome("done"), Outcome::kDone);
  EXPECT_EQ(parse_outcome("lease_lost"), Outcome::kLeaseLost);
  EXPECT_EQ(parse_outcome("item_gone"), Outcome::kItemGone);
}

TEST(ParseOutcome, RoundTripsWithToString) {
  for (auto outcome : {Outcome::kDone, Outcome::kLeaseLost, Outcome::kItemGone}) {
    EXPECT_EQ(parse_outcome(to_string(outcome)), outcome);
  }
}

TEST(ParseOutcome, RejectsAnythingElse) {
  for (const std::string bad : {"", "DONE", "Done", "done ", "lost", "unknown"}) {
    EXPECT_THROW(parse_outcome(bad), std::logic_error) << bad;
  }
  try {
    parse_outcome("bogus");
    FAIL();
  } catch (const std::logic_error& error) {
    EXPECT_NE(std::string(error.what()).find("bogus"), std::string::npos);
  }
}

TEST(DbTimeFromMicros, EpochMicroseconds) {
  EXPECT_EQ(db_time_from_micros(0), DbTime{});
  const std::int64_t micros = 1700000000123456;
  EXPECT_EQ(duration_cast<microseconds>(db_time_from_micros(micros).time_since_epoch()).count(), micros);
  EXPECT_EQ(duration_cast<microseconds>(db_time_from_micros(-5).time_since_epoch()).count(), -5);
}

TEST(Nullable, NullPointerForNullopt) {
  EXPECT_EQ(nullable(std::nullopt), nullptr);
  const std::optional<std::string> value = std::string("x");
  EXPECT_STREQ(nullable(value), "x");
}

}  // namespace
}  // namespace quick::store
