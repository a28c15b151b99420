// Hiding passwords in text about to be printed or logged: connection strings in URI form
// (postgresql://user:secret@host/db) and keyword form (password=secret), whole or quoted inside
// an error message, such as libpq's.
//
// Thread safety: pure functions.
#pragma once

#include <string>

namespace quick::util {

// `text` with every password it shows replaced by "***": the password of a URI's user info
// (scheme://user:***@host; up to the last '@' before the URI's query, so that a password with a
// stray '@' is hidden whole) and the value of every keyword whose name ends in "password", in any
// case (password=***, sslpassword='***', PGPASSWORD=***, ?password=***&sslmode=...).
std::string redact_passwords(const std::string& text);

// The same, and also every occurrence in `text` of the password `connection_string` carries:
// libpq quotes parts of a malformed URI (invalid percent-encoded token: "s%zzecret") without
// saying that they are a password. Passwords shorter than 4 characters are too likely to be part
// of ordinary words to be replaced blindly; they are still hidden where the patterns find them.
std::string redact_passwords(const std::string& text, const std::string& connection_string);

}  // namespace quick::util
