// Untrusted text (a tenant, a job type: whatever producers enqueued) made safe to print on a
// terminal or into a log line: it can neither move the cursor, change colours, clear the screen
// nor start a line of its own that would pass for the program's output.
//
// Thread safety: a pure function.
#pragma once

#include <string>

namespace quick::util {

// `text` with every byte that could control the terminal shown as \xNN (two upper-case hex
// digits): the ASCII control characters (newline, ESC, DEL, ...), bytes that are not valid
// UTF-8, and the characters that are invisible but act: C1 controls (U+0080..U+009F), the line
// and paragraph separators (U+2028, U+2029) and the bidirectional controls (U+061C, U+200E,
// U+200F, U+202A..U+202E, U+2066..U+2069), byte by byte. A backslash is doubled, so that a
// literal "\x1B" cannot be taken for an escaped one. Every other character, accented letters and
// other scripts included, is kept as it is.
std::string escape_unprintable(const std::string& text);

}  // namespace quick::util
