// docs/bad-input.md's tables for the `quick` tool, run row by row as written: each command (or
// worker configuration) fails, prints the row's error, and changes nothing in schema quick.
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

struct Row {
  std::string input;
  std::string error;
};

// The rows between `<!-- NAME: begin -->` and `<!-- NAME: end -->`: | `input` | `error` | ... |
std::vector<Row> documented_rows(const std::string& name) {
  static const std::regex row(R"(^\| `([^`]+)` \| `([^`]+)` \|)");
  std::istringstream doc(read_text_file(source_dir() / "docs" / "bad-input.md"));
  std::vector<Row> rows;
  bool inside = false;
  for (std::string line; std::getline(doc, line);) {
    if (line.find(name + ": end") != std::string::npos) inside = false;
    std::smatch match;
    if (inside && std::regex_search(line, match, row)) rows.push_back({match[1], match[2]});
    if (line.find(name + ": begin") != std::string::npos) inside = true;
  }
  return rows;
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  for (auto at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

class BadInputCliTest : public DatabaseTest {
 protected:
  void SetUp() override {
    DatabaseTest::SetUp();
    if (HasFatalFailure()) return;
    quick_ = quick_binary();
    ASSERT_FALSE(quick_.empty());
    config_ = dir_ / "worker.yaml";
    write_text_file(config_, valid_config());
    auto conn = connect();
    enqueue_committed(*conn, make_item("t"));
  }
  static std::string valid_config() {
    return "databases:\n  - url_env: QUICK_DATABASE_URL\njob_types:\n  j:\n    command: [\"true\"]\n";
  }
  // `command` (starting with "quick ") run by the shell with this test's database, to its end.
  CommandResult run_quick(const std::string& command) {
    return run_command("QUICK_DATABASE_URL=" + shell_quote(url()) + " timeout 20 " + shell_quote(quick_) +
                       command.substr(std::string("quick").size()));
  }
  std::string everything() { return every_row_of_schema_quick(url()); }

  std::string quick_;
  TempDir dir_;
  std::filesystem::path config_;
};

TEST_F(BadInputCliTest, EveryDocumentedBadFlagFailsWithItsErrorAndChangesNothing) {
  const auto rows = documented_rows("bad-input-cli");
  ASSERT_GE(rows.size(), 5u);
  const std::string before = everything();
  for (const auto& row : rows) {
    SCOPED_TRACE(row.input);
    const auto result = run_quick(replaced(row.input, "CONFIG", shell_quote(config_.string())));
    EXPECT_NE(result.exit_code, 0) << result.output;
    EXPECT_THAT(result.output, ::testing::HasSubstr(row.error));
    EXPECT_EQ(everything(), before);
  }
}

TEST_F(BadInputCliTest, EveryDocumentedBadConfigurationIsRefusedBeforeItConnects) {
  const auto rows = documented_rows("bad-input-config");
  ASSERT_GE(rows.size(), 5u);
  const std::string before = everything();
  for (const auto& row : rows) {
    SCOPED_TRACE(row.input);
    const auto bad_config = dir_ / "bad.yaml";
    write_text_file(bad_config, valid_config() + row.input + "\n");
    const auto result = run_quick("quick worker --config " + shell_quote(bad_config.string()));
    EXPECT_NE(result.exit_code, 0) << result.output;
    EXPECT_THAT(result.output, ::testing::HasSubstr(row.error));
    EXPECT_THAT(result.output, ::testing::HasSubstr("bad.yaml")) << "the error names the file";
    EXPECT_EQ(everything(), before);
  }
}

}  // namespace
}  // namespace quick::testing
