// util::storable_text: text from outside (a handler's failure reason) made fit for a text column,
// so that one bad reason cannot make the database refuse a batch of acknowledgments.
#include <gtest/gtest.h>

#include <string>

#include "util/text.h"

namespace quick::util {
namespace {

const std::string kReplacement = "\xEF\xBF\xBD";  // U+FFFD

TEST(StorableText, ValidTextIsKeptAsItIs) {
  EXPECT_EQ(storable_text("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80\nline two", 100),
            "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80\nline two");
  EXPECT_EQ(storable_text("", 10), "");
}

TEST(StorableText, InvalidBytesAndNulsAreReplaced) {
  EXPECT_EQ(storable_text("caf\xE9!", 100), "caf" + kReplacement + "!");                      // Latin-1
  EXPECT_EQ(storable_text("a\xC3", 100), "a" + kReplacement);                                 // cut short
  EXPECT_EQ(storable_text("\xED\xA0\x80", 100), kReplacement + kReplacement + kReplacement);  // a surrogate
  EXPECT_EQ(storable_text(std::string("a\0b", 3), 100), "a" + kReplacement + "b");
  EXPECT_TRUE(is_valid_utf8(storable_text("\xFF\xFE\x80 x \xC0\xAF", 100)));
}

TEST(StorableText, LongTextIsCutAtACharacterBoundaryAndMarked) {
  const std::string euros = "\xE2\x82\xAC\xE2\x82\xAC\xE2\x82\xAC\xE2\x82\xAC";  // 4 x 3 bytes
  const std::string cut = storable_text(euros + euros, 14);
  EXPECT_LE(cut.size(), 14u);
  EXPECT_TRUE(is_valid_utf8(cut));
  EXPECT_EQ(cut, "\xE2\x82\xAC\xE2\x82\xAC [...]");
  EXPECT_EQ(storable_text("abcdef", 6), "abcdef");    // exactly the limit: not cut
  EXPECT_LE(storable_text("abcdefg", 3).size(), 3u);  // below the marker's size: never over the limit
}

}  // namespace
}  // namespace quick::util
