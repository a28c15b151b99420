// docs/bad-input.md's table of the SQL functions' bad inputs, run row by row as written: each
// fails with the SQLSTATE and the message the row gives, and changes nothing in schema quick.
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support/commands.h"
#include "support/items.h"
#include "support/processes.h"
#include "support/schema_snapshot.h"
#include "support/test_database.h"

namespace quick::testing {
namespace {

struct BadInputRow {
  std::string sql;
  std::string sqlstate;
  std::string error;
};

// The rows between the doc's `bad-input-sql` markers: | `SQL` | SQLSTATE | `error` | ... |
std::vector<BadInputRow> documented_rows() {
  static const std::regex row(R"(^\| `([^`]+)` \| ([0-9A-Z]{5}) \| `([^`]+)` \|)");
  std::istringstream doc(read_text_file(source_dir() / "docs" / "bad-input.md"));
  std::vector<BadInputRow> rows;
  bool inside = false;
  for (std::string line; std::getline(doc, line);) {
    if (line.find("bad-input-sql: end") != std::string::npos) inside = false;
    std::smatch match;
    if (inside && std::regex_search(line, match, row)) rows.push_back({match[1], match[2], match[3]});
    if (line.find("bad-input-sql: begin") != std::string::npos) inside = true;
  }
  return rows;
}

class BadInputTest : public DatabaseTest {};

TEST_F(BadInputTest, EveryDocumentedBadInputFailsWithItsErrorAndChangesNothing) {
  const auto rows = documented_rows();
  ASSERT_GE(rows.size(), 50u) << "docs/bad-input.md lists no SQL rows between its markers";
  auto conn = connect();
  enqueue_committed(*conn, make_item("t"));
  const std::string before = every_row_of_schema_quick(url());
  for (const auto& row : rows) {
    SCOPED_TRACE(row.sql);
    try {
      pqxx::work txn(*conn);
      txn.exec(row.sql);
      txn.commit();
      ADD_FAILURE() << "succeeded; the doc says it fails with " << row.error;
    } catch (const pqxx::sql_error& error) {
      EXPECT_EQ(error.sqlstate(), row.sqlstate);
      EXPECT_THAT(error.what(), ::testing::HasSubstr(row.error));
    }
    EXPECT_EQ(every_row_of_schema_quick(url()), before) << "a rejected input changed the queue";
  }
}

}  // namespace
}  // namespace quick::testing
