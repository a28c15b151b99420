// Unit tests (no database) for util::redact_passwords: connection strings in URI and keyword
// form, alone or inside messages, lose their passwords and keep everything else.
#include "util/redact.h"

#include <gtest/gtest.h>

#include <string>

namespace quick::util {
namespace {

TEST(RedactPasswords, UriUserInfoPassword) {
  EXPECT_EQ(redact_passwords("postgresql://user:secret@host/db"), "postgresql://user:***@host/db");
  EXPECT_EQ(redact_passwords("postgres://u:s3cr%40t@db.example:5432/app?sslmode=require"),
            "postgres://u:***@db.example:5432/app?sslmode=require");
  // A stray '@' (or '/') in the password does not leave its tail visible.
  EXPECT_EQ(redact_passwords("postgresql://u:p@ss/w@rd@host/db"), "postgresql://u:***@host/db");
}

TEST(RedactPasswords, UrisWithoutAPasswordAreUnchanged) {
  for (const std::string text : {"postgresql://user@host:5432/db", "postgresql://host:5432/db",
                                 "postgresql:///db?host=/tmp", "https://example.com/a:b", "no uri here"}) {
    EXPECT_EQ(redact_passwords(text), text);
  }
}

TEST(RedactPasswords, KeywordPasswordInAnyCaseQuotedOrNot) {
  EXPECT_EQ(redact_passwords("host=db password=secret dbname=app"), "host=db password=*** dbname=app");
  EXPECT_EQ(redact_passwords("password = 'sec ret\\' more' user=u"), "password = '***' user=u");
  EXPECT_EQ(redact_passwords("sslpassword=k3y PGPASSWORD=pg Password=X"),
            "sslpassword=*** PGPASSWORD=*** Password=***");
  EXPECT_EQ(redact_passwords("postgresql://h/db?user=u&password=secret&sslmode=disable"),
            "postgresql://h/db?user=u&password=***&sslmode=disable");
  EXPECT_EQ(redact_passwords("password="), "password=");
}

TEST(RedactPasswords, MessagesAroundConnectionStringsKeepTheirWords) {
  EXPECT_EQ(redact_passwords("cannot connect to \"postgresql://app:hunter2@10.0.0.1/app\": timeout"),
            "cannot connect to \"postgresql://app:***@10.0.0.1/app\": timeout");
  EXPECT_EQ(redact_passwords("FATAL:  password authentication failed for user \"app\""),
            "FATAL:  password authentication failed for user \"app\"");
  EXPECT_EQ(redact_passwords("two: postgresql://a:one@h and password=two"),
            "two: postgresql://a:***@h and password=***");
}

// libpq quotes a malformed URI's password without saying what it is: the known connection
// string's password is hidden wherever it appears, raw or percent-decoded.
TEST(RedactPasswords, PasswordOfAKnownConnectionStringIsHiddenAnywhere) {
  const std::string url = "postgresql://user:top%zzsecret@host/db";
  EXPECT_EQ(redact_passwords("invalid percent-encoded token: \"top%zzsecret\"", url),
            "invalid percent-encoded token: \"***\"");
  EXPECT_EQ(redact_passwords("it was p@ss!", "postgresql://u:p%40ss!@h/db"), "it was ***");
  EXPECT_EQ(redact_passwords("echo: longsecret", "host=h password=longsecret"), "echo: ***");
  // Too short to replace blindly; still hidden where a pattern finds it.
  EXPECT_EQ(redact_passwords("postgresql://u:abc@h says abc", "postgresql://u:abc@h"), "postgresql://u:***@h says abc");
  EXPECT_EQ(redact_passwords("no password here", ""), "no password here");
}

}  // namespace
}  // namespace quick::util
