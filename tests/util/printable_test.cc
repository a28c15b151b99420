// Unit tests (no database) for util::escape_unprintable: what a tenant or job type could do to a
// terminal or a log is shown as \xNN, and everything else is kept.
#include "util/printable.h"

#include <gtest/gtest.h>

#include <string>

namespace quick::util {
namespace {

TEST(EscapeUnprintable, PrintableTextIsKept) {
  EXPECT_EQ(escape_unprintable(""), "");
  EXPECT_EQ(escape_unprintable("app42/user7 send_receipt ~!@#$%^&*()"), "app42/user7 send_receipt ~!@#$%^&*()");
  EXPECT_EQ(escape_unprintable("café 日本 😀"), "café 日本 😀");
}

TEST(EscapeUnprintable, AsciiControlCharactersAreEscaped) {
  EXPECT_EQ(escape_unprintable("a\nb\rc\td"), "a\\x0Ab\\x0Dc\\x09d");
  EXPECT_EQ(escape_unprintable("\x1b[31mred\x1b[0m"), "\\x1B[31mred\\x1B[0m");
  EXPECT_EQ(escape_unprintable(std::string("nul\0del\x7f", 8)), "nul\\x00del\\x7F");
}

TEST(EscapeUnprintable, BackslashIsDoubledSoEscapesAreUnambiguous) {
  EXPECT_EQ(escape_unprintable("a\\b"), "a\\\\b");
  EXPECT_EQ(escape_unprintable("\\x1B"), "\\\\x1B");  // a literal text, not an ESC
}

TEST(EscapeUnprintable, InvalidUtf8BytesAreEscaped) {
  EXPECT_EQ(escape_unprintable("a\xff"
                               "b"),
            "a\\xFFb");
  EXPECT_EQ(escape_unprintable("\xc3"), "\\xC3");                    // truncated sequence
  EXPECT_EQ(escape_unprintable("\xc0\xaf"), "\\xC0\\xAF");           // overlong '/'
  EXPECT_EQ(escape_unprintable("\xed\xa0\x80"), "\\xED\\xA0\\x80");  // a surrogate
}

TEST(EscapeUnprintable, InvisibleCharactersThatActAreEscaped) {
  EXPECT_EQ(escape_unprintable("\xc2\x9b"
                               "31m"),
            "\\xC2\\x9B31m");  // C1 CSI
  EXPECT_EQ(escape_unprintable("a\xe2\x80\xa8"
                               "b"),
            "a\\xE2\\x80\\xA8b");  // line separator
  EXPECT_EQ(escape_unprintable("abc\xe2\x80\xae"
                               "fed"),
            "abc\\xE2\\x80\\xAEfed");                                  // right-to-left override
  EXPECT_EQ(escape_unprintable("\xe2\x81\xa6x"), "\\xE2\\x81\\xA6x");  // left-to-right isolate
  EXPECT_EQ(escape_unprintable("\xc2\xa0"), "\xc2\xa0");               // a no-break space only looks like a space
}

}  // namespace
}  // namespace quick::util
