// Which PostgreSQL server binaries the development cluster runs with (src/local_postgres/): an
// existing data directory needs the major version that made it (its PG_VERSION), since a server
// refuses another major's data; only a cluster still to be created takes the newest installed.
// Unit-level: one major is installed here, so the installations are made up.
#include <filesystem>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "local_postgres/local_cluster.h"
#include "support/processes.h"

namespace quick::local_postgres {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

std::vector<ServerInstallation> installations(const std::vector<std::string>& majors) {
  std::vector<ServerInstallation> installed;
  for (const auto& major : majors) installed.push_back({major, fs::path("/usr/lib/postgresql") / major / "bin"});
  return installed;
}

std::string refusal(const std::vector<ServerInstallation>& installed, const std::string& data_version) {
  try {
    server_bin_dir(installed, data_version, "/state/postgres-abc123/data");
    return "";
  } catch (const std::runtime_error& error) {
    return error.what();
  }
}

TEST(ServerBinDirTest, AnExistingDataDirectoryRunsWithTheMajorVersionThatMadeIt) {
  const auto installed = installations({"15", "16"});
  EXPECT_EQ(server_bin_dir(installed, "15", "/data"), "/usr/lib/postgresql/15/bin")
      << "a cluster made with 15 keeps running with 15 once 16 is installed beside it";
  EXPECT_EQ(server_bin_dir(installed, "16", "/data"), "/usr/lib/postgresql/16/bin");
  EXPECT_EQ(server_bin_dir(installations({"9.6", "10"}), "9.6", "/data"), "/usr/lib/postgresql/9.6/bin");
}

TEST(ServerBinDirTest, ANewClusterIsCreatedWithTheNewest) {
  EXPECT_EQ(server_bin_dir(installations({"15", "16"}), "", "/data"), "/usr/lib/postgresql/16/bin");
  EXPECT_EQ(server_bin_dir(installations({"15"}), "", "/data"), "/usr/lib/postgresql/15/bin");
}

TEST(ServerBinDirTest, ADataDirectoryOfAMajorVersionNotInstalledIsAnErrorNamingIt) {
  const std::string error = refusal(installations({"16", "17"}), "15");
  EXPECT_THAT(error, HasSubstr("PostgreSQL 15"));
  EXPECT_THAT(error, HasSubstr("/state/postgres-abc123/data"));
  EXPECT_THAT(error, HasSubstr("installed: 16, 17"));
  EXPECT_THAT(error, HasSubstr("postgresql-15"));
  EXPECT_THAT(refusal({}, ""), HasSubstr("no PostgreSQL server found"));
  EXPECT_THAT(refusal({}, "15"), HasSubstr("no PostgreSQL server found"));
}

TEST(ServerBinDirTest, TheInstallationsAreFoundOldestFirstByNumber) {
  testing::TempDir root;
  for (const std::string major : {"16", "9.6", "10", "15"}) {
    fs::create_directories(root.path() / major / "bin");
    testing::write_text_file(root.path() / major / "bin" / "initdb", "");
    testing::write_text_file(root.path() / major / "bin" / "pg_ctl", "");
  }
  fs::create_directories(root.path() / "17" / "bin");  // a client-only package: no server
  testing::write_text_file(root.path() / "17" / "bin" / "pg_ctl", "");
  std::vector<std::string> majors;
  for (const auto& installation : installed_servers(root.path())) {
    majors.push_back(installation.major);
    EXPECT_EQ(installation.bin, root.path() / installation.major / "bin");
  }
  EXPECT_EQ(majors, (std::vector<std::string>{"9.6", "10", "15", "16"}));
  EXPECT_TRUE(installed_servers(root.path() / "missing").empty());
}

}  // namespace
}  // namespace quick::local_postgres
