#include "support/commands.h"

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>

namespace quick::testing {

std::filesystem::path source_dir() { return QUICK_SOURCE_DIR; }

CommandResult run_command(const std::string& command) {
  CommandResult result;
  const std::string in_source_tree = "cd " + shell_quote(source_dir().string()) + " && { " + command + "; } 2>&1";
  FILE* pipe = ::popen(in_source_tree.c_str(), "r");
  if (pipe == nullptr) return result;
  std::array<char, 4096> buffer{};
  while (std::fgets(buffer.data(), buffer.size(), pipe) != nullptr) result.output += buffer.data();
  const int status = ::pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

std::string shell_quote(const std::string& text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

std::string psql_binary() {
  const char* configured = std::getenv("PSQL");
  if (configured != nullptr && *configured != '\0') return configured;
  return "psql";
}

CommandResult run_psql_file(const std::string& url, const std::filesystem::path& file) {
  return run_command(psql_binary() + " -X -q -v ON_ERROR_STOP=1 -f " + shell_quote(file.string()) + " " +
                     shell_quote(url));
}

}  // namespace quick::testing
