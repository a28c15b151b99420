// The architecture as docs/architecture.md declares it ("Layers", "Where each public header is
// implemented"), checked against the source: every #include points down (or into its own folder
// or the public API), namespaces follow folders, and the public-header table is true.
#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/commands.h"
#include "support/processes.h"

namespace quick::testing {
namespace {

namespace fs = std::filesystem;

// The lines of docs/architecture.md between `<!-- NAME: begin -->` and `<!-- NAME: end -->`.
std::vector<std::string> marked_lines(const std::string& name) {
  std::istringstream doc(read_text_file(source_dir() / "docs" / "architecture.md"));
  std::vector<std::string> lines;
  bool inside = false;
  for (std::string line; std::getline(doc, line);) {
    if (line.find("<!-- " + name + ": end -->") != std::string::npos) inside = false;
    if (inside) lines.push_back(line);
    if (line.find("<!-- " + name + ": begin -->") != std::string::npos) inside = true;
  }
  return lines;
}

// The `quoted` names of a line, in order.
std::vector<std::string> backquoted(const std::string& line) {
  static const std::regex quoted("`([^`]+)`");
  std::vector<std::string> names;
  for (auto it = std::sregex_iterator(line.begin(), line.end(), quoted); it != std::sregex_iterator(); ++it) {
    names.push_back((*it)[1].str());
  }
  return names;
}

// Folder -> layer number, from the numbered list ("1. `generated` (...), `util`").
std::map<std::string, int> declared_layers() {
  std::map<std::string, int> layers;
  int layer = 0;
  for (const auto& line : marked_lines("layers")) {
    if (line.empty()) continue;
    ++layer;
    for (const auto& name : backquoted(line)) {
      if (name.find('.') == std::string::npos) layers[name] = layer;  // skip `embedded_sql.h`
    }
  }
  return layers;
}

struct SourceFile {
  fs::path path;         // absolute
  std::string relative;  // "src/scanner/scanner.cc"
  std::string folder;    // "scanner"
  std::string text;
};

std::vector<SourceFile> library_and_tool_sources() {
  std::vector<SourceFile> files;
  for (const auto& entry : fs::recursive_directory_iterator(source_dir() / "src")) {
    const auto extension = entry.path().extension();
    if (!entry.is_regular_file() || (extension != ".cc" && extension != ".h")) continue;
    SourceFile file;
    file.path = entry.path();
    file.relative = fs::relative(entry.path(), source_dir()).string();
    file.folder = fs::relative(entry.path(), source_dir() / "src").begin()->string();
    file.text = read_text_file(entry.path());
    files.push_back(std::move(file));
  }
  return files;
}

// The quoted includes of a file ("scanner/scanner.h", "quick/item.h", "embedded_sql.h").
std::vector<std::string> quoted_includes(const std::string& text) {
  static const std::regex include(R"re(^\s*#\s*include\s+"([^"]+)")re");
  std::vector<std::string> includes;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    std::smatch match;
    if (std::regex_search(line, match, include)) includes.push_back(match[1].str());
  }
  return includes;
}

// The folder an include points into: "quick" for the public API, "generated" for the embedded
// SQL, else the src/ folder.
std::string included_folder(const std::string& include) {
  if (include == "embedded_sql.h") return "generated";
  const auto slash = include.find('/');
  return slash == std::string::npos ? "" : include.substr(0, slash);
}

TEST(LayeringTest, TheLayersAreDeclaredAndCoverEverySourceFolder) {
  const auto layers = declared_layers();
  ASSERT_GE(layers.size(), 8u) << "docs/architecture.md declares no layers between its markers";
  for (const auto& entry : fs::directory_iterator(source_dir() / "src")) {
    if (!entry.is_directory()) continue;
    EXPECT_TRUE(layers.count(entry.path().filename().string()))
        << "src/" << entry.path().filename().string() << " is in no layer of docs/architecture.md";
  }
}

TEST(LayeringTest, EveryIncludePointsIntoItsOwnFolderTheApiOrALowerLayer) {
  const auto layers = declared_layers();
  for (const auto& file : library_and_tool_sources()) {
    const int own = layers.count(file.folder) ? layers.at(file.folder) : 0;
    for (const auto& include : quoted_includes(file.text)) {
      const std::string target = included_folder(include);
      if (target == "quick" || target == file.folder) continue;
      ASSERT_TRUE(layers.count(target)) << file.relative << " includes \"" << include << "\", in no declared layer";
      EXPECT_LT(layers.at(target), own) << file.relative << " (layer " << own << ") includes \"" << include
                                        << "\" (layer " << layers.at(target) << "): includes point down only";
    }
  }
}

TEST(LayeringTest, PublicHeadersIncludeOnlyThePublicApi) {
  for (const auto& entry : fs::directory_iterator(source_dir() / "include" / "quick")) {
    for (const auto& include : quoted_includes(read_text_file(entry.path()))) {
      EXPECT_EQ(include.rfind("quick/", 0), 0u) << entry.path().filename() << " includes \"" << include << "\"";
    }
  }
}

TEST(LayeringTest, NamespacesFollowFolders) {
  static const std::regex opened(R"(^namespace (quick(::[a-z_]+)*) \{)");
  for (const auto& file : library_and_tool_sources()) {
    std::istringstream in(file.text);
    for (std::string line; std::getline(in, line);) {
      std::smatch match;
      if (!std::regex_search(line, match, opened)) continue;
      const std::string name = match[1].str();
      const std::string expected = "quick::" + file.folder;
      EXPECT_TRUE(name == "quick" || name == expected || name.rfind(expected + "::", 0) == 0)
          << file.relative << " opens namespace " << name << "; files in src/" << file.folder << "/ use " << expected
          << " (or quick, for definitions of the public API)";
    }
  }
}

// Header -> the files named in its row ("header only" rows name none).
std::map<std::string, std::vector<std::string>> public_header_table() {
  std::map<std::string, std::vector<std::string>> table;
  for (const auto& line : marked_lines("public-headers")) {
    const auto names = backquoted(line);
    if (names.empty() || names.front().rfind("include/quick/", 0) != 0) continue;
    auto& files = table[names.front()];
    for (std::size_t i = 1; i < names.size(); ++i) {
      if (names[i].rfind("src/", 0) == 0) files.push_back(names[i]);
    }
  }
  return table;
}

TEST(LayeringTest, ThePublicHeaderTableNamesWhereEachHeaderIsImplemented) {
  const auto table = public_header_table();
  for (const auto& entry : fs::directory_iterator(source_dir() / "include" / "quick")) {
    const std::string header = "include/quick/" + entry.path().filename().string();
    EXPECT_TRUE(table.count(header)) << header << " has no row in docs/architecture.md's public-header table";
  }
  std::set<std::string> named;
  for (const auto& [header, files] : table) {
    const std::string include = "quick/" + fs::path(header).filename().string();
    for (const auto& file : files) {
      named.insert(file);
      ASSERT_TRUE(fs::exists(source_dir() / file)) << header << "'s row names " << file << ", which does not exist";
      // The file includes the header itself, or through its own header (job_context.cc).
      std::string text = read_text_file(source_dir() / file);
      const auto own_header = (source_dir() / file).replace_extension(".h");
      if (fs::exists(own_header)) text += read_text_file(own_header);
      EXPECT_NE(text.find("#include \"" + include + "\""), std::string::npos)
          << file << " is named as implementing " << header << " but does not include it";
    }
  }
  // Every library file that defines public API (a top-level `namespace quick {`) is in the table.
  for (const auto& file : library_and_tool_sources()) {
    if (file.path.extension() != ".cc" || file.folder == "cli") continue;
    if (file.text.find("\nnamespace quick {") == std::string::npos) continue;
    EXPECT_TRUE(named.count(file.relative)) << file.relative
                                            << " defines public API (namespace quick) but is "
                                               "not in docs/architecture.md's public-header table";
  }
}

}  // namespace
}  // namespace quick::testing
