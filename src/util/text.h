// Small text checks shared by the argument validators.
#pragma once

#include <cstddef>
#include <string>

namespace quick::util {

// Well-formed UTF-8 (no overlong forms, no surrogates, nothing above U+10FFFF), as Postgres
// requires of text in a UTF8 database.
bool is_valid_utf8(const std::string& text);

// Code points in valid UTF-8 text.
std::size_t utf8_length(const std::string& text);

// A UUID in its canonical text form, e.g. 123e4567-e89b-12d3-a456-426614174000.
bool is_canonical_uuid(const std::string& text);

}  // namespace quick::util
