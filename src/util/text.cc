#include "util/text.h"

#include <cctype>

namespace quick::util {

bool is_valid_utf8(const std::string& text) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(text.data());
  const std::size_t size = text.size();
  std::size_t i = 0;
  while (i < size) {
    const unsigned char lead = bytes[i];
    std::size_t continuation = 0;
    unsigned int code_point = 0;
    if (lead < 0x80) {
      ++i;
      continue;
    } else if (lead >= 0xC2 && lead <= 0xDF) {
      continuation = 1;
      code_point = lead & 0x1F;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
      continuation = 2;
      code_point = lead & 0x0F;
    } else if (lead >= 0xF0 && lead <= 0xF4) {
      continuation = 3;
      code_point = lead & 0x07;
    } else {
      return false;
    }
    for (std::size_t k = 1; k <= continuation; ++k) {
      if (i + k >= size || (bytes[i + k] & 0xC0) != 0x80) return false;
      code_point = (code_point << 6) | (bytes[i + k] & 0x3F);
    }
    const bool overlong = (continuation == 2 && code_point < 0x800) || (continuation == 3 && code_point < 0x10000);
    const bool surrogate = code_point >= 0xD800 && code_point <= 0xDFFF;
    if (overlong || surrogate || code_point > 0x10FFFF) return false;
    i += continuation + 1;
  }
  return true;
}

std::size_t utf8_length(const std::string& text) {
  std::size_t characters = 0;
  for (unsigned char c : text) {
    if ((c & 0xC0) != 0x80) ++characters;  // count lead bytes, not continuation bytes
  }
  return characters;
}

bool is_canonical_uuid(const std::string& text) {
  if (text.size() != 36) return false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const bool dash_position = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash_position ? text[i] != '-' : !std::isxdigit(static_cast<unsigned char>(text[i]))) return false;
  }
  return true;
}

}  // namespace quick::util
