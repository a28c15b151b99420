#include "util/redact.h"

#include <cctype>
#include <utility>
#include <vector>

namespace quick::util {
namespace {

constexpr const char* kMask = "***";
constexpr std::size_t kShortestPasswordReplacedBlindly = 4;

// A span [begin, end) of the text that holds a password.
using Span = std::pair<std::size_t, std::size_t>;

bool is_space(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

// Where a URI that starts at `start` (after "://") ends inside a message: at white space or a
// quote around it.
std::size_t uri_end(const std::string& text, std::size_t start) {
  std::size_t end = start;
  while (end < text.size() && !is_space(text[end]) && text[end] != '"' && text[end] != '\'') ++end;
  return end;
}

// scheme://user:PASSWORD@host...: the user info ends at the last '@' before the query.
void find_uri_passwords(const std::string& text, std::vector<Span>& spans) {
  for (std::size_t at = text.find("://"); at != std::string::npos; at = text.find("://", at + 3)) {
    const std::size_t start = at + 3;
    std::size_t end = uri_end(text, start);
    const std::size_t query = text.find_first_of("?#", start);
    if (query != std::string::npos && query < end) end = query;
    const std::size_t last_at = text.rfind('@', end == 0 ? 0 : end - 1);
    if (last_at == std::string::npos || last_at < start) continue;
    const std::size_t colon = text.find(':', start);
    if (colon == std::string::npos || colon >= last_at) continue;  // a user without a password
    spans.emplace_back(colon + 1, last_at);
  }
}

// ...password = VALUE: the value ends at white space or '&' (a URI query), or is quoted with
// backslash escapes, as libpq writes it.
void find_keyword_passwords(const std::string& text, std::vector<Span>& spans) {
  static const std::string kKeyword = "password";
  for (std::size_t i = 0; i + kKeyword.size() <= text.size(); ++i) {
    bool match = true;
    for (std::size_t k = 0; k < kKeyword.size() && match; ++k) {
      match = std::tolower(static_cast<unsigned char>(text[i + k])) == kKeyword[k];
    }
    if (!match) continue;
    std::size_t p = i + kKeyword.size();
    while (p < text.size() && is_space(text[p])) ++p;
    if (p >= text.size() || text[p] != '=') continue;
    ++p;
    while (p < text.size() && is_space(text[p])) ++p;
    std::size_t end = p;
    if (p < text.size() && text[p] == '\'') {
      ++p;
      end = p;
      while (end < text.size() && text[end] != '\'') end += text[end] == '\\' ? 2 : 1;
      end = std::min(end, text.size());
    } else {
      while (end < text.size() && !is_space(text[end]) && text[end] != '&') ++end;
    }
    if (end > p) spans.emplace_back(p, end);
    i = end == 0 ? i : end - 1;
  }
}

std::vector<Span> password_spans(const std::string& text) {
  std::vector<Span> spans;
  find_uri_passwords(text, spans);
  find_keyword_passwords(text, spans);
  return spans;
}

// `text` with each span (possibly overlapping) replaced by the mask.
std::string mask_spans(const std::string& text, std::vector<Span> spans) {
  std::vector<bool> hidden(text.size(), false);
  for (const auto& [begin, end] : spans) {
    for (std::size_t i = begin; i < end && i < text.size(); ++i) hidden[i] = true;
  }
  std::string result;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (!hidden[i]) {
      result += text[i];
    } else if (i == 0 || !hidden[i - 1]) {
      result += kMask;
    }
  }
  return result;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// A URI's password as libpq uses it: %XX sequences decoded (invalid ones kept as they are).
std::string percent_decoded(const std::string& text) {
  std::string decoded;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size() && hex_value(text[i + 1]) >= 0 && hex_value(text[i + 2]) >= 0) {
      decoded += static_cast<char>(hex_value(text[i + 1]) * 16 + hex_value(text[i + 2]));
      i += 2;
    } else {
      decoded += text[i];
    }
  }
  return decoded;
}

}  // namespace

std::string redact_passwords(const std::string& text) { return mask_spans(text, password_spans(text)); }

std::string redact_passwords(const std::string& text, const std::string& connection_string) {
  std::vector<std::string> secrets;
  for (const auto& [begin, end] : password_spans(connection_string)) {
    std::string secret = connection_string.substr(begin, end - begin);
    secrets.push_back(percent_decoded(secret));
    secrets.push_back(std::move(secret));
  }
  std::vector<Span> spans = password_spans(text);
  for (const std::string& secret : secrets) {
    if (secret.size() < kShortestPasswordReplacedBlindly) continue;
    for (std::size_t at = text.find(secret); at != std::string::npos; at = text.find(secret, at + 1)) {
      spans.emplace_back(at, at + secret.size());
    }
  }
  return mask_spans(text, spans);
}

}  // namespace quick::util
