// The SQL files' layout (docs/architecture.md, "SQL files"): every function has exactly one
// definition, in sql/functions/; migrations hold no function; a database built with psql from the
// files, in the order the README gives, is the database `quick migrate` builds; and a database
// whose functions are older than this build is told to run `quick migrate`.
#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "quick/errors.h"
#include "quick/migrate.h"
#include "schema/sql_definitions.h"
#include "support/commands.h"
#include "support/processes.h"
#include "support/schema_snapshot.h"
#include "support/test_database.h"

namespace quick::schema {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing::read_text_file;
using testing::source_dir;

std::vector<fs::path> sql_files_under(const fs::path& folder) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::recursive_directory_iterator(folder)) {
    if (entry.is_regular_file() && entry.path().extension() == ".sql") files.push_back(entry.path());
  }
  return files;
}

// Every `CREATE [OR REPLACE] FUNCTION quick.<name>` in the live SQL: migrations/ and sql/.
std::multimap<std::string, std::string> function_definitions_in_the_tree() {
  static const std::regex definition(R"(CREATE\s+(OR\s+REPLACE\s+)?FUNCTION\s+quick\.([A-Za-z0-9_]+))",
                                     std::regex::icase);
  std::multimap<std::string, std::string> found;  // name -> file
  std::vector<fs::path> files = sql_files_under(source_dir() / "migrations");
  for (const auto& file : sql_files_under(source_dir() / "sql")) files.push_back(file);
  for (const auto& file : files) {
    const std::string text = read_text_file(file);
    for (auto it = std::sregex_iterator(text.begin(), text.end(), definition); it != std::sregex_iterator(); ++it) {
      found.emplace((*it)[2].str(), fs::relative(file, source_dir()).string());
    }
  }
  return found;
}

TEST(SqlDefinitionsTest, EveryFunctionIsDefinedInExactlyOneFileUnderSqlFunctions) {
  const auto definitions = function_definitions_in_the_tree();
  ASSERT_FALSE(definitions.empty());
  std::set<std::string> names;
  for (const auto& [name, file] : definitions) names.insert(name);
  for (const auto& name : names) {
    const auto [first, last] = definitions.equal_range(name);
    std::vector<std::string> files;
    for (auto it = first; it != last; ++it) files.push_back(it->second);
    EXPECT_EQ(files.size(), 1u) << "quick." << name << " is defined in " << ::testing::PrintToString(files);
    for (const auto& file : files) {
      EXPECT_EQ(file.rfind("sql/functions/", 0), 0u)
          << "quick." << name << " is defined in " << file
          << ": functions live in sql/functions/, migrations only drop or rename them";
    }
  }
}

TEST(SqlDefinitionsTest, TheMigratorReadsEveryFunctionOfEveryDefinitionFile) {
  std::map<std::string, int> per_file;
  for (const auto& function : embedded_functions()) {
    ++per_file[function.file];
    EXPECT_FALSE(function.body.empty()) << function.file << ": quick." << function.name;
  }
  // The same names the tree scan finds, so stale_functions() checks every function.
  std::set<std::string> embedded_names;
  for (const auto& function : embedded_functions()) embedded_names.insert(function.name);
  std::set<std::string> tree_names;
  for (const auto& [name, file] : function_definitions_in_the_tree()) tree_names.insert(name);
  EXPECT_EQ(embedded_names, tree_names);
  for (const auto& file : sql_files_under(source_dir() / "sql" / "functions")) {
    const auto relative = fs::relative(file, source_dir()).string();
    EXPECT_GE(per_file[relative], 1) << relative << " defines no function the migrator can read";
  }
}

TEST(SqlDefinitionsTest, FunctionFilesNeverCommitOnTheirOwnAndEachMigrationIsOneGuardedTransaction) {
  // Function files are applied together in one transaction by the migrator: they must not
  // commit on their own. Migrations are one transaction each, guarded against a second run.
  for (const auto& file : sql_files_under(source_dir() / "sql")) {
    const std::string text = read_text_file(file);
    EXPECT_EQ(text.find("\nBEGIN;"), std::string::npos) << file;
    EXPECT_EQ(text.find("\nCOMMIT;"), std::string::npos) << file;
  }
  for (const auto& file : sql_files_under(source_dir() / "migrations")) {
    const std::string text = read_text_file(file);
    EXPECT_NE(text.find("\nBEGIN;"), std::string::npos) << file;
    EXPECT_NE(text.find("\nCOMMIT;"), std::string::npos) << file;
    EXPECT_NE(text.find("pg_advisory_xact_lock(487085218667)"), std::string::npos) << file;
  }
}

// The enqueue protocol's files, as docs/protocol.md lists them between its markers.
std::vector<std::string> listed_enqueue_protocol_files() {
  std::istringstream doc(read_text_file(source_dir() / "docs" / "protocol.md"));
  static const std::regex row(R"(^\| `([^`]+)` \|)");
  std::vector<std::string> files;
  bool inside = false;
  for (std::string line; std::getline(doc, line);) {
    if (line.find("enqueue-protocol-files: begin") != std::string::npos) inside = true;
    if (line.find("enqueue-protocol-files: end") != std::string::npos) inside = false;
    std::smatch match;
    if (inside && std::regex_search(line, match, row)) files.push_back(match[1].str());
  }
  return files;
}

// `text` without its comments (SQL `--` or C++ `//` to the end of the line).
std::string without_line_comments(const std::string& text, const std::string& marker) {
  std::istringstream in(text);
  std::string out;
  for (std::string line; std::getline(in, line);) out += line.substr(0, line.find(marker)) + "\n";
  return out;
}

TEST(SqlDefinitionsTest, TheEnqueueProtocolsFilesAreListedInOnePlaceThatEachOfThemNames) {
  const auto listed = listed_enqueue_protocol_files();
  ASSERT_GE(listed.size(), 5u) << "docs/protocol.md lists no enqueue protocol files between its markers";
  const std::set<std::string> listed_set(listed.begin(), listed.end());
  for (const auto& file : listed) {
    ASSERT_TRUE(fs::exists(source_dir() / file)) << "docs/protocol.md lists " << file << ", which does not exist";
    EXPECT_NE(read_text_file(source_dir() / file).find("docs/protocol.md#where-the-enqueue-protocol-lives"),
              std::string::npos)
        << file << " does not say it is part of the enqueue protocol";
  }
  // A statement that takes the enqueuer's lock is part of the protocol: it must be listed. (The
  // GC's side takes FOR UPDATE and is documented under "Settling and garbage collection".)
  for (const auto& folder : {"sql", "src"}) {
    for (const auto& entry : fs::recursive_directory_iterator(source_dir() / folder)) {
      if (!entry.is_regular_file()) continue;
      const auto extension = entry.path().extension();
      if (extension != ".sql" && extension != ".cc" && extension != ".h") continue;
      const auto relative = fs::relative(entry.path(), source_dir()).string();
      const auto code = without_line_comments(read_text_file(entry.path()), extension == ".sql" ? "--" : "//");
      if (code.find("FOR KEY SHARE") != std::string::npos) {
        EXPECT_TRUE(listed_set.count(relative)) << relative
                                                << " takes FOR KEY SHARE on a pointer but is not listed in "
                                                   "docs/protocol.md#where-the-enqueue-protocol-lives";
      }
    }
  }
}

// The README's one line that builds a database with psql alone, run as written.
std::string readme_psql_line() {
  std::istringstream readme(read_text_file(source_dir() / "README.md"));
  for (std::string line; std::getline(readme, line);) {
    if (line.rfind("cat migrations/", 0) == 0) return line;
  }
  return "";
}

class SqlDefinitionsDatabaseTest : public testing::DatabaseTest {};

TEST_F(SqlDefinitionsDatabaseTest, ADatabaseBuiltWithPsqlFromTheReadmesLineEqualsOneBuiltByQuickMigrate) {
  const std::string line = readme_psql_line();
  ASSERT_FALSE(line.empty()) << "README.md has no line starting with `cat migrations/`";
  testing::EmptyDatabase by_psql;
  const auto result = testing::run_command("DATABASE_URL=" + testing::shell_quote(by_psql.url()) + "; " + line);
  ASSERT_EQ(result.exit_code, 0) << line << "\n" << result.output;

  // This test's own database was built by quick::migrate (the test template).
  const auto expected = testing::schema_snapshot(url());
  const auto actual = testing::schema_snapshot(by_psql.url());
  EXPECT_GT(expected.size(), 50u);
  EXPECT_EQ(testing::schema_difference(expected, actual), "");

  pqxx::connection conn(by_psql.url());
  EXPECT_NO_THROW(require_current_schema(conn));
}

TEST_F(SqlDefinitionsDatabaseTest, AnOlderFunctionDefinitionIsReportedUntilQuickMigrateReplacesIt) {
  auto conn = connect();
  EXPECT_TRUE(stale_functions(*conn).empty());
  query(
      "CREATE OR REPLACE FUNCTION quick.item_miss_reason(item_id bigint) RETURNS quick.outcome "
      "LANGUAGE sql STABLE AS $$ SELECT 'item_gone'::quick.outcome $$");
  EXPECT_EQ(stale_functions(*conn), std::vector<std::string>{"quick.item_miss_reason"});
  try {
    require_current_schema(*conn);
    FAIL() << "expected SchemaError";
  } catch (const SchemaError& error) {
    EXPECT_THAT(error.what(), HasSubstr("quick.item_miss_reason"));
    EXPECT_THAT(error.what(), HasSubstr("quick migrate"));
  }
  const auto report = migrate(*conn);
  EXPECT_TRUE(report.applied.empty());
  EXPECT_TRUE(stale_functions(*conn).empty());
  EXPECT_NO_THROW(require_current_schema(*conn));
}

TEST_F(SqlDefinitionsDatabaseTest, AMissingFunctionIsReported) {
  auto conn = connect();
  query("DROP FUNCTION quick.scan_pointers(integer, integer, timestamptz, timestamptz, interval)");
  EXPECT_EQ(stale_functions(*conn), std::vector<std::string>{"quick.scan_pointers"});
  EXPECT_THROW(require_current_schema(*conn), SchemaError);
}

TEST_F(SqlDefinitionsDatabaseTest, AFailingDefinitionFileRollsBackEveryDefinitionAndNamesTheFile) {
  // A view the migrator cannot replace (a column it would drop) makes sql/views.sql fail, after
  // every function file ran: none of their replacements may remain.
  query(
      "CREATE OR REPLACE FUNCTION quick.item_miss_reason(item_id bigint) RETURNS quick.outcome "
      "LANGUAGE sql STABLE AS $$ SELECT 'item_gone'::quick.outcome $$");
  // Made by the owner, as migrate runs as the owner: the failure is the dropped column, not the view's owner.
  query(
      "SET ROLE quick_admin; DROP VIEW quick.queue_summary; CREATE VIEW quick.queue_summary AS SELECT 1 AS mine; "
      "RESET ROLE");
  auto conn = connect();
  try {
    migrate(*conn);
    FAIL() << "expected SchemaError";
  } catch (const SchemaError& error) {
    EXPECT_THAT(error.what(), HasSubstr("sql/views.sql"));
    EXPECT_THAT(error.what(), HasSubstr("rolled back"));
    EXPECT_THAT(error.what(), HasSubstr("cannot change name of view column"));
  }
  EXPECT_EQ(stale_functions(*conn), std::vector<std::string>{"quick.item_miss_reason"});
  pqxx::nontransaction session(*conn);
  EXPECT_TRUE(session.exec1("SELECT current_user = session_user")[0].as<bool>())
      << "a failed migrate kept the schema owner's role";
}

}  // namespace
}  // namespace quick::schema
