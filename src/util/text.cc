#include "util/text.h"

#include <algorithm>
#include <cctype>

namespace quick::util {

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

namespace {

// The length in bytes of the well-formed UTF-8 character (ASCII included) that starts at `i`, or
// 0 if none does.
std::size_t character_length(const std::string& text, std::size_t i) {
  if (static_cast<unsigned char>(text[i]) < 0x80) return 1;
  unsigned int code_point = 0;
  return utf8_sequence(text, i, code_point);
}

}  // namespace

bool is_valid_utf8(const std::string& text) {
  std::size_t i = 0;
  while (i < text.size()) {
    const std::size_t length = character_length(text, i);
    if (length == 0) return false;
    i += length;
  }
  return true;
}

std::string storable_text(const std::string& text, std::size_t max_bytes) {
  static const std::string replacement = "\xEF\xBF\xBD";  // U+FFFD
  static const std::string cut_marker = " [...]";
  std::string out;
  out.reserve(std::min(text.size(), max_bytes));
  std::size_t i = 0;
  while (i < text.size()) {
    std::size_t length = character_length(text, i);
    const bool keep = length > 0 && text[i] != '\0';
    const std::size_t added = keep ? length : replacement.size();
    if (out.size() + added > max_bytes) {
      while (!out.empty() && out.size() + cut_marker.size() > max_bytes) {
        // Back off whole characters: drop continuation bytes, then their lead byte.
        while (!out.empty() && (static_cast<unsigned char>(out.back()) & 0xC0) == 0x80) out.pop_back();
        if (!out.empty()) out.pop_back();
      }
      if (out.size() + cut_marker.size() <= max_bytes) out += cut_marker;
      return out;
    }
    if (keep) {
      out.append(text, i, length);
    } else {
      out += replacement;
      length = 1;
    }
    i += length;
  }
  return out;
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
