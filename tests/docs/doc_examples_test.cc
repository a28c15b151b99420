// The user-facing documentation's examples, checked against the code so that they cannot drift:
// - every ```cpp block of README.md and docs/*.md compiles against include/quick/ (a syntax-only
//   compile with the build's compiler and libpqxx, about a second);
// - every ```yaml block that is a consumer configuration (it has `databases:`) loads;
// - README.md's psql enqueue example runs on a migrated database;
// - every flag a `quick ...` command line of README.md and docs/*.md uses is one its command has.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iterator>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "quick/config.h"
#include "support/commands.h"
#include "support/processes.h"
#include "support/test_database.h"

namespace quick::testing {
namespace {

namespace fs = std::filesystem;

// README.md and docs/*.md, except the benchmark records (lab notes, not instructions).
std::vector<fs::path> user_docs() {
  std::vector<fs::path> docs{source_dir() / "README.md"};
  for (const auto& entry : fs::directory_iterator(source_dir() / "docs")) {
    const std::string name = entry.path().filename().string();
    if (entry.path().extension() == ".md" && name.rfind("benchmarks", 0) != 0) docs.push_back(entry.path());
  }
  std::sort(docs.begin(), docs.end());
  return docs;
}

struct Block {
  fs::path file;
  int first_line = 0;  // 1-based line of the block's first line of code
  std::vector<std::string> lines;
};

// The fenced blocks of `file` whose info string is `language` (```cpp, ```yaml, ...).
std::vector<Block> blocks_of(const fs::path& file, const std::string& language) {
  std::istringstream text(read_text_file(file));
  std::vector<Block> blocks;
  bool inside = false;
  bool wanted = false;
  int number = 0;
  for (std::string line; std::getline(text, line);) {
    ++number;
    if (line.rfind("```", 0) == 0) {
      if (!inside) {
        inside = true;
        wanted = line == "```" + language;
        if (wanted) blocks.push_back({file, number + 1, {}});
      } else {
        inside = false;
      }
    } else if (inside && wanted) {
      blocks.back().lines.push_back(line);
    }
  }
  return blocks;
}

std::string doc_name(const fs::path& file) { return fs::relative(file, source_dir()).string(); }

// "VAR" from `VAR:TYPE=value` in the build's CMakeCache.txt, or "".
std::string cmake_cache_value(const std::string& variable) {
  const char* build = std::getenv("QUICK_BUILD_DIR");
  if (build == nullptr) return "";
  std::istringstream cache(read_text_file(fs::path(build) / "CMakeCache.txt"));
  for (std::string line; std::getline(cache, line);) {
    if (line.rfind(variable + ":", 0) == 0) return line.substr(line.find('=') + 1);
  }
  return "";
}

// ---- C++ ---------------------------------------------------------------------------------------

// What the examples take as given: the application's own functions, and the variables a fragment
// uses without declaring them (each block runs in a function with these parameters; a block that
// declares its own shadows them).
constexpr const char* kPrelude = R"(
#include <cstdlib>
#include <string>
#include <vector>
#include <quick/quick.h>
namespace {
// The application's own code that the examples call.
[[maybe_unused]] int order_id_from(const std::string& payload);
[[maybe_unused]] std::vector<std::string> pages_of(const std::string& payload);
[[maybe_unused]] void render(const std::string& page);
[[maybe_unused]] void respond(int status, const char* content_type, const std::string& body);
[[maybe_unused]] void write_application_rows(pqxx::work& txn);
}  // namespace
)";
constexpr const char* kParameters =
    "[[maybe_unused]] const quick::ConsumerConfig& config, [[maybe_unused]] const quick::Handler& handler, "
    "[[maybe_unused]] const quick::NewItem& item";

TEST(DocExamplesTest, CppExamplesCompileAgainstThePublicHeaders) {
  std::vector<Block> blocks;
  for (const auto& doc : user_docs()) {
    for (auto& block : blocks_of(doc, "cpp")) blocks.push_back(std::move(block));
  }
  // The README's two main examples must be among them (a renamed fence would skip them).
  std::string readme;
  for (const auto& block : blocks) {
    if (block.file.filename() != "README.md") continue;
    for (const auto& line : block.lines) readme += line + "\n";
  }
  ASSERT_NE(readme.find("quick::enqueue_in("), std::string::npos) << "README.md has no ```cpp block with enqueue_in";
  ASSERT_NE(readme.find("quick::Consumer consumer("), std::string::npos)
      << "README.md has no ```cpp block with a Consumer";

  std::string source = kPrelude;
  int index = 0;
  for (const auto& block : blocks) {
    std::string body;
    for (const auto& line : block.lines) {
      const auto first = line.find_first_not_of(' ');
      const std::string trimmed = first == std::string::npos ? "" : line.substr(first);
      // "#include" goes to the top (the prelude has the public headers); a line "..." stands for
      // the application's code.
      body += (trimmed.rfind("#include", 0) == 0 || trimmed == "...") ? "\n" : line + "\n";
    }
    source += "namespace doc_example_" + std::to_string(++index) + " {\n[[maybe_unused]] void example(" + kParameters +
              ") {\n{\n#line " + std::to_string(block.first_line) + " \"" + doc_name(block.file) + "\"\n" + body +
              "}\n}\n}\n";
  }
  const fs::path scratch = fs::temp_directory_path() / ("quick_doc_examples_" + std::to_string(::getpid()));
  fs::create_directories(scratch);
  const fs::path file = scratch / "doc_examples.cc";
  write_text_file(file, source);

  std::string compiler = cmake_cache_value("CMAKE_CXX_COMPILER");
  if (compiler.empty()) compiler = "c++";
  std::string command = shell_quote(compiler) + " -std=c++17 -fsyntax-only -I" +
                        shell_quote((source_dir() / "include").string());
  for (const char* variable : {"QUICK_PQXX_INCLUDE_DIRS", "QUICK_LIBPQ_INCLUDE_DIRS"}) {
    std::istringstream dirs(cmake_cache_value(variable));
    for (std::string dir; std::getline(dirs, dir, ';');) {
      if (!dir.empty()) command += " -I" + shell_quote(dir);
    }
  }
  command += " " + shell_quote(file.string()) + " 2>&1";
  const CommandResult result = run_command(command);
  EXPECT_EQ(result.exit_code, 0) << "a ```cpp example of the documentation does not compile (" << blocks.size()
                                 << " examples; " << command << "):\n"
                                 << result.output;
  if (result.exit_code == 0) fs::remove_all(scratch);
}

// ---- YAML --------------------------------------------------------------------------------------

TEST(DocExamplesTest, YamlConfigurationsLoad) {
  ::setenv("QUICK_DATABASE_URL", "host=127.0.0.1 dbname=docs", 1);
  int configurations = 0;
  for (const auto& doc : user_docs()) {
    for (const auto& block : blocks_of(doc, "yaml")) {
      std::string yaml;
      bool consumer = false;
      for (const auto& line : block.lines) {
        yaml += line + "\n";
        if (line.rfind("databases:", 0) == 0) consumer = true;
      }
      if (!consumer) continue;  // not a consumer configuration (Prometheus rules, say)
      ++configurations;
      try {
        parse_config_yaml(yaml);
      } catch (const std::exception& e) {
        ADD_FAILURE() << doc_name(doc) << ":" << block.first_line << ": the configuration does not load: " << e.what();
      }
    }
  }
  EXPECT_GE(configurations, 2) << "README.md's worker.yaml and docs/configuration.md's example";
}

// ---- SQL ---------------------------------------------------------------------------------------

class DocSqlTest : public DatabaseTest {};

TEST_F(DocSqlTest, ReadmeEnqueueFromPsqlRuns) {
  std::string sql;
  for (const auto& block : blocks_of(source_dir() / "README.md", "sql")) {
    std::string text;
    for (const auto& line : block.lines) text += line + "\n";
    if (text.find("quick.enqueue(") != std::string::npos) sql = text;
  }
  ASSERT_FALSE(sql.empty()) << "README.md has no ```sql block calling quick.enqueue";
  query("CREATE TABLE orders (id int PRIMARY KEY, customer text)");  // the example's own table
  const fs::path file = fs::temp_directory_path() / ("quick_doc_readme_" + std::to_string(::getpid()) + ".sql");
  write_text_file(file, sql);
  const CommandResult result = run_psql_file(url(), file);
  fs::remove(file);
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_EQ(query_value<int>("SELECT count(*) FROM quick.items WHERE tenant = 'app42/user7'"), 2);
}

// ---- Command lines -----------------------------------------------------------------------------

// The flags `quick <words> --help` lists.
std::set<std::string> flags_of(const std::string& quick, const std::string& words) {
  static std::map<std::string, std::set<std::string>> cache;
  auto found = cache.find(words);
  if (found != cache.end()) return found->second;
  const CommandResult help = run_command(shell_quote(quick) + " " + words + " --help");
  EXPECT_EQ(help.exit_code, 0) << "quick " << words << " --help:\n" << help.output;
  std::set<std::string> flags;
  static const std::regex flag(R"(--[a-z][a-z0-9-]*)");
  for (auto it = std::sregex_iterator(help.output.begin(), help.output.end(), flag); it != std::sregex_iterator();
       ++it) {
    flags.insert(it->str());
  }
  return cache[words] = flags;
}

TEST(DocExamplesTest, CommandLinesUseFlagsTheirCommandsHave) {
  const std::string quick = quick_binary();
  ASSERT_FALSE(quick.empty());
  const std::map<std::string, std::vector<std::string>> groups = {
      {"db", {"start", "stop", "status", "url"}},
      {"tenant", {"pause", "resume", "paused", "databases", "where", "place", "move", "rebalance"}},
      {"job-type", {"pause", "resume", "paused"}},
      {"dead", {"list", "retry", "purge"}},
      {"item", {"cancel"}}};
  // `quick <command> [<subcommand>] ...` up to the end of the shell command or code span.
  static const std::regex command_line(
      R"((^|[\s`(/])quick ((db|migrate|enqueue|stats|demo|worker|tenant|job-type|doctor|dead|item|dashboard|top)\b[^`|;&#)]*))");
  int checked = 0;
  for (const auto& doc : user_docs()) {
    std::istringstream text(read_text_file(doc));
    int number = 0;
    for (std::string line; std::getline(text, line);) {
      ++number;
      for (auto it = std::sregex_iterator(line.begin(), line.end(), command_line); it != std::sregex_iterator(); ++it) {
        std::istringstream words((*it)[2].str());
        std::vector<std::string> word{std::istream_iterator<std::string>(words), {}};
        std::vector<std::string> candidates;  // the commands whose flags count
        const auto group = groups.find(word[0]);
        if (group == groups.end()) {
          candidates = {word[0]};
        } else if (word.size() > 1 && std::count(group->second.begin(), group->second.end(), word[1]) > 0) {
          candidates = {word[0] + " " + word[1], word[0]};  // `db --state-dir` goes after the subcommand too
        } else {
          for (const auto& sub : group->second) candidates.push_back(word[0] + " " + sub);  // "quick tenant ..."
        }
        for (std::string w : word) {
          if (!w.empty() && w.front() == '[') w.erase(0, 1);  // [--optional FLAG]
          if (w.rfind("--", 0) != 0 || w.size() < 3) continue;
          const std::string flag = w.substr(0, w.find_first_of("=]"));
          ++checked;
          const bool known = std::any_of(candidates.begin(), candidates.end(),
                                         [&](const std::string& c) { return flags_of(quick, c).count(flag) > 0; });
          EXPECT_TRUE(known) << doc_name(doc) << ":" << number << ": `quick " << (*it)[2].str() << "`: `quick "
                             << candidates.front() << "` has no flag " << flag;
        }
      }
    }
  }
  EXPECT_GE(checked, 40);
}

}  // namespace
}  // namespace quick::testing
