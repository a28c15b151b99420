// Small text checks shared by the argument validators.
#pragma once

#include <cstddef>
#include <string>

namespace quick::util {

// Well-formed UTF-8 (no overlong forms, no surrogates, nothing above U+10FFFF), as Postgres
// requires of text in a UTF8 database.
bool is_valid_utf8(const std::string& text);

// The length of the well-formed multi-byte UTF-8 sequence starting at `i` (2 to 4), with its code
// point; 0 when the byte there does not start one (an ASCII byte included).
std::size_t utf8_sequence(const std::string& text, std::size_t i, unsigned int& code_point);

// `text` made fit to store in a text column: every byte that does not start a well-formed UTF-8
// character, and every NUL (which Postgres text cannot hold), replaced by U+FFFD; and, if it is
// longer than `max_bytes`, cut at a character boundary and ended with " [...]" (at most
// `max_bytes` bytes in all). For text from outside (an exception's what(), a handler's reason)
// that the database would otherwise refuse, refusing the whole statement it is part of.
std::string storable_text(const std::string& text, std::size_t max_bytes);

// Code points in valid UTF-8 text.
std::size_t utf8_length(const std::string& text);

// A UUID in its canonical text form, e.g. 123e4567-e89b-12d3-a456-426614174000.
bool is_canonical_uuid(const std::string& text);

}  // namespace quick::util
