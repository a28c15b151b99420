#include "util/printable.h"

#include <cstdio>

namespace quick::util {
namespace {

void append_escaped_byte(std::string& out, unsigned char byte) {
  char hex[5];
  std::snprintf(hex, sizeof hex, "\\x%02X", byte);
  out += hex;
}

// The length of the well-formed UTF-8 sequence starting at `i` and its code point, or 0 when
// the byte there does not start one.
std::size_t utf8_sequence(const std::string& text, std::size_t i, unsigned int& code_point) {
  const auto lead = static_cast<unsigned char>(text[i]);
  std::size_t length = 0;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
    code_point = lead & 0x1F;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    code_point = lead & 0x0F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    code_point = lead & 0x07;
  } else {
    return 0;
  }
  if (i + length > text.size()) return 0;
  for (std::size_t k = 1; k < length; ++k) {
    const auto next = static_cast<unsigned char>(text[i + k]);
    if ((next & 0xC0) != 0x80) return 0;
    code_point = (code_point << 6) | (next & 0x3F);
  }
  const bool overlong = (length == 3 && code_point < 0x800) || (length == 4 && code_point < 0x10000);
  const bool surrogate = code_point >= 0xD800 && code_point <= 0xDFFF;
  if (overlong || surrogate || code_point > 0x10FFFF) return 0;
  return length;
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
