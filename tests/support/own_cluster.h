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

// A cluster whose directory LocalCluster had to put elsewhere (/var/tmp, under root) would
// outlive the test's scratch directory.
inline void expect_cluster_inside(const local_postgres::LocalCluster& cluster, const std::filesystem::path& dir) {
  EXPECT_EQ(cluster.data_dir().string().rfind(dir.string(), 0), 0u)
      << "the cluster's directory " << cluster.data_dir() << " is not under " << dir
      << ": it would outlive the test (TempDir::cluster_state_dir)";
}

class OwnCluster {
 public:
  // Creates and starts the cluster under `dir`, and migrates its database `quick`. `dir` must be
  // one the postgres OS user can reach (TempDir::cluster_state_dir), so that the cluster is
  // deleted with it.
  explicit OwnCluster(const std::filesystem::path& dir) : cluster_(dir) {
    url_ = cluster_.start();
    expect_cluster_inside(cluster_, dir);
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
