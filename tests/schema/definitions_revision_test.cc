// The revision of the SQL definitions (sql/functions/definitions_revision.sql): it goes up with
// every change to them, and an older build's migrate() does not replace a newer build's
// functions with its own unless told to (docs/operations.md#upgrading-and-going-back).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "quick/errors.h"
#include "quick/migrate.h"
#include "schema/sql_definitions.h"
#include "support/test_database.h"

namespace quick::schema {
namespace {

using ::testing::HasSubstr;

// The fingerprint of every definition file but the revision's own, for this revision. When a file
// of sql/functions/ or sql/views.sql changes, this test fails: raise the number in
// sql/functions/definitions_revision.sql by one, and record it and the new fingerprint here.
constexpr int kRevision = 2;
constexpr const char* kFingerprint = "f9017d78c0c4a864";

TEST(DefinitionsRevisionTest, TheRevisionGoesUpWithEveryChangeToTheDefinitions) {
  EXPECT_EQ(definitions_revision(), kRevision)
      << "sql/functions/definitions_revision.sql says " << definitions_revision() << ": record it in this test";
  EXPECT_EQ(definitions_fingerprint(), kFingerprint)
      << "the SQL definitions changed since revision " << kRevision << ": raise quick.definitions_revision() in "
      << "sql/functions/definitions_revision.sql to " << kRevision + 1 << ", and record that revision and the "
      << "fingerprint " << definitions_fingerprint() << " in tests/schema/definitions_revision_test.cc";
}

class MigrateAgainstNewerDefinitionsTest : public testing::DatabaseTest {
 protected:
  // What a newer build would leave: a higher revision, and a function it changed.
  void install_newer_build(int revision_ahead) {
    query(
        "CREATE OR REPLACE FUNCTION quick.definitions_revision() RETURNS integer LANGUAGE sql IMMUTABLE AS "
        "$$ SELECT " +
        std::to_string(definitions_revision() + revision_ahead) + " $$");
    query(
        "CREATE OR REPLACE FUNCTION quick.busy_settle_delay(busy_settles integer) RETURNS interval "
        "LANGUAGE sql IMMUTABLE AS $$ SELECT interval '42 milliseconds' $$");
  }
  std::string settle_delay_body() const {
    return query_value<std::string>("SELECT prosrc FROM pg_proc WHERE proname = 'busy_settle_delay'");
  }
};

TEST_F(MigrateAgainstNewerDefinitionsTest, AnOlderBuildRefusesToReplaceThemAndSaysSo) {
  install_newer_build(1);
  auto conn = connect();
  try {
    migrate(*conn);
    FAIL() << "migrate() replaced a newer build's functions";
  } catch (const SchemaError& error) {
    EXPECT_THAT(error.what(), HasSubstr("revision " + std::to_string(definitions_revision() + 1)));
    EXPECT_THAT(error.what(), HasSubstr("newer than this build's"));
    EXPECT_THAT(error.what(), HasSubstr("--allow-older-definitions"));
  }
  EXPECT_THAT(settle_delay_body(), HasSubstr("42 milliseconds")) << "the newer function was replaced";
  try {
    require_current_schema(*conn);
    FAIL() << "require_current_schema() accepted functions newer than this build's";
  } catch (const SchemaError& error) {
    EXPECT_THAT(error.what(), HasSubstr("Upgrade quick-pg"));
  }
}

TEST_F(MigrateAgainstNewerDefinitionsTest, GoingBackOnPurposeInstallsThisBuildsFunctions) {
  install_newer_build(3);
  auto conn = connect();
  MigrateOptions options;
  options.allow_older_definitions = true;
  migrate(*conn, options);
  EXPECT_EQ(applied_definitions_revision(*conn), definitions_revision());
  EXPECT_THAT(settle_delay_body(), ::testing::Not(HasSubstr("42 milliseconds")));
  EXPECT_NO_THROW(require_current_schema(*conn));
}

// An older revision, or none (a database migrated before revisions were counted), is replaced as
// every migrate() replaces the functions.
TEST_F(MigrateAgainstNewerDefinitionsTest, OlderOrMissingRevisionsAreReplaced) {
  install_newer_build(-1);
  auto conn = connect();
  EXPECT_THAT([&] { require_current_schema(*conn); },
              ::testing::ThrowsMessage<SchemaError>(HasSubstr("run `quick migrate`")));
  migrate(*conn);
  EXPECT_EQ(applied_definitions_revision(*conn), definitions_revision());
  query("DROP FUNCTION quick.definitions_revision()");
  EXPECT_EQ(applied_definitions_revision(*conn), 0);
  migrate(*conn);
  EXPECT_EQ(applied_definitions_revision(*conn), definitions_revision());
  EXPECT_NO_THROW(require_current_schema(*conn));
}

}  // namespace
}  // namespace quick::schema
