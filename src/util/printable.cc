#include "util/printable.h"

#include <cstdio>

#include "util/text.h"

namespace quick::util {
namespace {

void append_escaped_byte(std::string& out, unsigned char byte) {
  char hex[5];
  std::snprintf(hex, sizeof hex, "\\x%02X", byte);
  out += hex;
}

// Invisible characters that act on the terminal or on how the line reads.
bool acts_invisibly(unsigned int code_point) {
  return (code_point >= 0x80 && code_point <= 0x9F) || code_point == 0x2028 || code_point == 0x2029 ||
         code_point == 0x061C || code_point == 0x200E || code_point == 0x200F ||
         (code_point >= 0x202A && code_point <= 0x202E) || (code_point >= 0x2066 && code_point <= 0x2069);
}

}  // namespace

std::string escape_unprintable(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  std::size_t i = 0;
  while (i < text.size()) {
    const auto byte = static_cast<unsigned char>(text[i]);
    if (byte == '\\') {
      out += "\\\\";
      ++i;
    } else if (byte < 0x20 || byte == 0x7F) {
      append_escaped_byte(out, byte);
      ++i;
    } else if (byte < 0x80) {
      out += text[i];
      ++i;
    } else {
      unsigned int code_point = 0;
      const std::size_t length = utf8_sequence(text, i, code_point);
      if (length == 0) {
        append_escaped_byte(out, byte);
        ++i;
        continue;
      }
      for (std::size_t k = 0; k < length; ++k) {
        if (acts_invisibly(code_point)) {
          append_escaped_byte(out, static_cast<unsigned char>(text[i + k]));
        } else {
          out += text[i + k];
        }
      }
      i += length;
    }
  }
  return out;
}

}  // namespace quick::util
