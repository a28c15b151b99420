// A PostgreSQL cluster of a test's own (a LocalCluster in a scratch directory, migrated), stopped
// however the test ends, which the test may crash and restart.
#pragma once

#include <signal.h>

#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <pqxx/pqxx>

#include "local_postgres/local_cluster.h"
#include "quick/migrate.h"
#include "support/eventually.h"
#include "support/processes.h"

namespace quick::testing {

class OwnCluster {
 public:
  // Creates and starts the cluster under `dir`, and migrates its database `quick`.
  explicit OwnCluster(const std::filesystem::path& dir) : cluster_(dir) {
    url_ = cluster_.start();
    pqxx::connection conn(url_);
    migrate(conn);
  }
  ~OwnCluster() {
    try {
      cluster_.stop();
    } catch (const std::exception& error) {
      ADD_FAILURE() << "could not stop a test's own cluster: " << error.what();
    }
  }
  OwnCluster(const OwnCluster&) = delete;
  OwnCluster& operator=(const OwnCluster&) = delete;

  const std::string& url() const { return url_; }
  local_postgres::LocalCluster& cluster() { return cluster_; }

  // The postmaster's pid, from its pid file.
  pid_t postmaster_pid() const {
    std::ifstream pid_file(cluster_.data_dir() / "postmaster.pid");
    pid_t pid = 0;
    pid_file >> pid;
    return pid;
  }

  // A crash and its recovery: SIGQUIT makes the postmaster stop at once (immediate mode), without
  // a checkpoint; the next start replays the WAL. The cluster keeps its port, so every client's
  // connection string stays valid.
  void restart_immediately() {
    const pid_t pid = postmaster_pid();
    ASSERT_GT(pid, 0);
    ::kill(pid, SIGQUIT);
    ASSERT_TRUE(eventually([&] { return !process_alive(pid); }, std::chrono::seconds(30)))
        << "the postmaster did not stop";
    ASSERT_EQ(cluster_.start(), url_) << "the cluster came back on another port";
  }

 private:
  local_postgres::LocalCluster cluster_;
  std::string url_;
};

}  // namespace quick::testing
