// Running shell commands from tests: psql on the SQL files, the README's own command lines.
#pragma once

#include <filesystem>
#include <string>

namespace quick::testing {

// The source tree (QUICK_SOURCE_DIR, set by tests/CMakeLists.txt).
std::filesystem::path source_dir();

struct CommandResult {
  int exit_code = -1;  // -1 when the command did not exit normally
  std::string output;  // stdout and stderr
};

// Runs `command` with /bin/sh in the source tree; waits for it.
CommandResult run_command(const std::string& command);

// `text` as one single-quoted shell word.
std::string shell_quote(const std::string& text);

// $PSQL, or psql from PATH.
std::string psql_binary();

// psql -X -q -v ON_ERROR_STOP=1 -f file url.
CommandResult run_psql_file(const std::string& url, const std::filesystem::path& file);

}  // namespace quick::testing
