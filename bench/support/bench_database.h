// Scratch databases for benchmarks: each experiment gets its own, freshly created and migrated,
// on the server under test, and drops it afterwards, also when quick_bench is stopped by a signal
// (cleanup_on_signal.h). Only a process killed outright (SIGKILL, a crash) leaves one behind:
// see docs/benchmarks.md#running-the-suite.
#pragma once

#include <memory>
#include <string>

#include <pqxx/pqxx>

#include "support/cleanup_on_signal.h"

namespace quick::bench {

class ScratchDatabase {
 public:
  // Creates `name`_<pid> (dropping one this process left first) and applies the quick migrations.
  ScratchDatabase(const std::string& server_url, std::string name);
  ~ScratchDatabase();  // drops it (best effort)
  ScratchDatabase(const ScratchDatabase&) = delete;
  ScratchDatabase& operator=(const ScratchDatabase&) = delete;

  const std::string& url() const { return url_; }
  std::unique_ptr<pqxx::connection> connect() const;
  // Runs one statement on a fresh connection (setup and checks, not measured paths).
  pqxx::result exec(const std::string& sql) const;
  // VACUUM ANALYZE of the quick tables, so that measurements start from a settled state.
  void vacuum() const;

 private:
  std::string server_url_;
  std::string name_;
  std::string url_;
  std::unique_ptr<CleanupOnSignal> on_signal_;  // drops it if a signal ends the process first
};

}  // namespace quick::bench
