// docker/: what can be checked without a container engine. compose.yaml parses and wires
// postgres -> migrate -> worker; the services run real subcommands and flags of this build's
// `quick`; they set the variable the code reads, pointing at the postgres service; the worker's
// mounted configuration loads with the library's reader; the Dockerfile builds with the scripts a
// developer uses and installs, in its runtime stage, the package of every library `quick` links.
#include <libpq-fe.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "quick/config.h"
#include "quick/database.h"
#include "support/commands.h"
#include "support/processes.h"

namespace quick::testing {
namespace {

namespace fs = std::filesystem;

fs::path docker_dir() { return source_dir() / "docker"; }

YAML::Node compose() { return YAML::LoadFile((docker_dir() / "compose.yaml").string()); }

std::vector<std::string> command_of(const YAML::Node& service) {
  return service["command"].as<std::vector<std::string>>();
}

std::map<std::string, std::string> environment_of(const YAML::Node& service) {
  return service["environment"].as<std::map<std::string, std::string>>();
}

// The keywords of a libpq connection string or URI, as libpq reads it.
std::map<std::string, std::string> conninfo_fields(const std::string& url) {
  char* error = nullptr;
  PQconninfoOption* options = PQconninfoParse(url.c_str(), &error);
  if (options == nullptr) {
    ADD_FAILURE() << "libpq cannot parse " << url << ": " << (error != nullptr ? error : "out of memory");
    PQfreemem(error);
    return {};
  }
  std::map<std::string, std::string> fields;
  for (PQconninfoOption* option = options; option->keyword != nullptr; ++option) {
    if (option->val != nullptr) fields[option->keyword] = option->val;
  }
  PQconninfoFree(options);
  return fields;
}

// Sets an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(std::string name, const std::string& value) : name_(std::move(name)) {
    if (const char* old = std::getenv(name_.c_str())) old_ = old;
    ::setenv(name_.c_str(), value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_) {
      ::setenv(name_.c_str(), old_->c_str(), 1);
    } else {
      ::unsetenv(name_.c_str());
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_;
  std::optional<std::string> old_;
};

// The worker's configuration file on the host, from its `./file:/container/path[:ro]` mount.
fs::path mounted_config(const YAML::Node& worker, const std::string& container_path) {
  for (const auto& volume : worker["volumes"]) {
    const auto text = volume.as<std::string>();
    const auto colon = text.find(':');
    if (colon == std::string::npos) continue;
    const auto rest = text.substr(colon + 1);
    if (rest == container_path || rest == container_path + ":ro") return docker_dir() / text.substr(0, colon);
  }
  ADD_FAILURE() << "no volume of the worker mounts " << container_path;
  return {};
}

TEST(DockerFiles, ComposeWiresPostgresMigrateAndWorkerInOrder) {
  const YAML::Node services = compose()["services"];
  ASSERT_TRUE(services.IsMap());
  for (const char* name : {"postgres", "migrate", "worker"}) ASSERT_TRUE(services[name]) << name;

  const YAML::Node postgres = services["postgres"];
  EXPECT_EQ(postgres["image"].as<std::string>().rfind("postgres:15", 0), 0u) << "the project targets Postgres 15";
  EXPECT_TRUE(postgres["healthcheck"]["test"]) << "migrate waits for the postgres service to be healthy";
  EXPECT_EQ(services["migrate"]["depends_on"]["postgres"]["condition"].as<std::string>(), "service_healthy");
  EXPECT_EQ(services["worker"]["depends_on"]["migrate"]["condition"].as<std::string>(),
            "service_completed_successfully");
  for (const char* name : {"migrate", "worker"}) {
    const YAML::Node build = services[name]["build"];
    ASSERT_TRUE(build) << name;
    EXPECT_TRUE(
        fs::is_regular_file(docker_dir() / build["context"].as<std::string>() / build["dockerfile"].as<std::string>()))
        << name << ": the build names no existing Dockerfile";
  }
}

// The postgres image's entrypoint initializes a fresh volume with a temporary server that listens
// on the Unix socket only; a pg_isready through the socket finds it ready, compose starts migrate,
// whose TCP connection to postgres:5432 is refused (and the worker, which waits for migrate's
// success, never starts). The healthcheck must probe over TCP, as migrate connects.
TEST(DockerFiles, PostgresHealthcheckProbesOverTcp) {
  const YAML::Node test = compose()["services"]["postgres"]["healthcheck"]["test"];
  ASSERT_TRUE(test && test.IsSequence());
  const auto words = test.as<std::vector<std::string>>();
  ASSERT_GE(words.size(), 2u);
  ASSERT_EQ(words[0], "CMD") << "an exec-form command: no shell between compose and pg_isready";
  ASSERT_EQ(words[1], "pg_isready");
  std::optional<std::string> host;
  for (std::size_t i = 2; i < words.size(); ++i) {
    if (words[i].rfind("--host=", 0) == 0) host = words[i].substr(7);
    if ((words[i] == "-h" || words[i] == "--host") && i + 1 < words.size()) host = words[i + 1];
  }
  ASSERT_TRUE(host.has_value()) << "pg_isready without a host probes the Unix socket";
  EXPECT_FALSE(host->empty());
  EXPECT_NE(host->front(), '/') << "a directory is a Unix socket, not TCP";
}

// The variables migrate and worker get are the ones the code reads, and they point at the
// postgres service with its own user, password and database.
TEST(DockerFiles, ServicesSetTheDatabaseVariableTheCodeReads) {
  const YAML::Node services = compose()["services"];
  const auto postgres_env = environment_of(services["postgres"]);
  for (const char* name : {"migrate", "worker"}) {
    SCOPED_TRACE(name);
    const auto environment = environment_of(services[name]);
    ASSERT_EQ(environment.size(), 1u) << "only QUICK_DATABASE_URL is read by quick migrate and quick worker";
    ASSERT_EQ(environment.begin()->first, "QUICK_DATABASE_URL");
    const std::string url = environment.begin()->second;
    {
      ScopedEnv set("QUICK_DATABASE_URL", url);
      EXPECT_EQ(database_url_from_environment(), url) << "the library no longer reads QUICK_DATABASE_URL";
    }
    EXPECT_NO_THROW(validate_connection_string(url));
    auto fields = conninfo_fields(url);
    EXPECT_EQ(fields["host"], "postgres");
    EXPECT_EQ(fields["user"], postgres_env.at("POSTGRES_USER"));
    EXPECT_EQ(fields["password"], postgres_env.at("POSTGRES_PASSWORD"));
    EXPECT_EQ(fields["dbname"], postgres_env.at("POSTGRES_DB"));
  }
}

// The mounted worker.yaml loads with the library's reader, and `quick worker` would accept it.
TEST(DockerFiles, WorkerConfigurationLoads) {
  const YAML::Node worker = compose()["services"]["worker"];
  const auto command = command_of(worker);
  ASSERT_EQ(command.size(), 3u);
  ASSERT_EQ(command[1], "--config");
  const fs::path config_file = mounted_config(worker, command[2]);
  ASSERT_TRUE(fs::is_regular_file(config_file)) << config_file;

  ScopedEnv set("QUICK_DATABASE_URL", environment_of(worker).at("QUICK_DATABASE_URL"));
  ConsumerConfig config;
  ASSERT_NO_THROW(config = load_config_file(config_file.string()));
  ASSERT_FALSE(config.job_types.empty()) << "quick worker refuses a configuration without job types";
  for (const auto& [job_type, settings] : config.job_types) {
    ASSERT_FALSE(settings.command.empty()) << job_type << ": quick worker needs a command";
    EXPECT_EQ(settings.command[0].rfind('/', 0), 0u) << job_type << ": the image has no PATH search to rely on";
  }
}

// Every service command is a real subcommand of this build, and its flags are its own.
TEST(DockerFiles, ServiceCommandsAreRealSubcommandsAndFlags) {
  const std::string quick = quick_binary();
  ASSERT_FALSE(quick.empty());
  const YAML::Node services = compose()["services"];
  for (const char* name : {"migrate", "worker"}) {
    const auto command = command_of(services[name]);
    ASSERT_FALSE(command.empty()) << name;
    const CommandResult help = run_command(shell_quote(quick) + " " + shell_quote(command[0]) + " --help");
    ASSERT_EQ(help.exit_code, 0) << "quick " << command[0] << " --help:\n" << help.output;
    for (const auto& word : command) {
      if (word.rfind("--", 0) != 0) continue;
      EXPECT_TRUE(std::regex_search(help.output, std::regex("[ ,\\n]" + word + "[ =\\n]")))
          << name << ": quick " << command[0] << " has no flag " << word << "\n"
          << help.output;
    }
  }
}

std::string dockerfile() { return read_text_file(docker_dir() / "Dockerfile"); }

// The build stage runs what a developer runs (scripts/install-deps, scripts/build) and installs.
TEST(DockerFiles, DockerfileBuildsWithTheProjectScripts) {
  const std::string text = dockerfile();
  for (const char* step : {"scripts/install-deps", "scripts/build --target quick_cli", "cmake --install build"}) {
    EXPECT_NE(text.find(step), std::string::npos) << "the Dockerfile no longer runs " << step;
  }
  for (const char* script : {"scripts/install-deps", "scripts/build"}) {
    EXPECT_EQ(::access((source_dir() / script).c_str(), X_OK), 0) << script;
  }
  const char* build_dir = std::getenv("QUICK_BUILD_DIR");
  ASSERT_NE(build_dir, nullptr);
  const CommandResult targets = run_command("cmake --build " + shell_quote(build_dir) + " --target help");
  ASSERT_EQ(targets.exit_code, 0) << targets.output;
  EXPECT_NE(targets.output.find("quick_cli"), std::string::npos) << "no target quick_cli to build";

  std::smatch user;
  ASSERT_TRUE(std::regex_search(text, user, std::regex("\\nUSER +([^\\s]+)"))) << "the image must not run as root";
  EXPECT_NE(user[1].str(), "root");
  EXPECT_NE(user[1].str(), "0");
  EXPECT_NE(text.find("/opt/quick/share/quick"), std::string::npos) << "the SQL files are part of the image";
}

// The runtime user is numeric (USER uid:gid): Kubernetes' runAsNonRoot cannot tell whether a
// user named by name is root (the kubelet refuses to start the container, "image has non-numeric
// user"), and the numbers are those of the user and group the image creates, so that the home
// directory it owns is the process's.
TEST(DockerFiles, RuntimeUserIsNumericAndTheCreatedUsers) {
  const std::string text = dockerfile();
  std::smatch user;
  ASSERT_TRUE(std::regex_search(text, user, std::regex("\\nUSER +([^\\s]+)"))) << "the image must not run as root";
  std::smatch numeric;
  const std::string named = user[1].str();
  ASSERT_TRUE(std::regex_match(named, numeric, std::regex("([0-9]+):([0-9]+)")))
      << "USER " << named << " is not uid:gid";
  EXPECT_NE(numeric[1].str(), "0");
  EXPECT_NE(numeric[2].str(), "0");
  std::smatch created_user, created_group;
  ASSERT_TRUE(std::regex_search(text, created_user, std::regex("useradd [^\\n]*--uid ([0-9]+)[^\\n]*--gid ([0-9]+)")))
      << "the image creates its user with a fixed uid and gid";
  ASSERT_TRUE(std::regex_search(text, created_group, std::regex("groupadd [^\\n]*--gid ([0-9]+)")))
      << "the image creates its group with a fixed gid";
  EXPECT_EQ(numeric[1].str(), created_user[1].str()) << "USER's uid is not the created user's";
  EXPECT_EQ(numeric[2].str(), created_user[2].str()) << "USER's gid is not the created user's group";
  EXPECT_EQ(created_group[1].str(), created_user[2].str());
}

// The entrypoint runs quick under an init. In a container the entrypoint is process 1, which
// inherits every orphan: quick worker kills what a job command left in its process group once
// the command exits, and those processes, their parent gone, become process 1's children. quick
// waits only for the children it started, so as process 1 it left each of them a zombie for the
// container's life. tini, as process 1, reaps them and passes SIGTERM on to quick.
TEST(DockerFiles, EntrypointRunsQuickUnderAnInitThatReapsOrphans) {
  const std::string text = dockerfile();
  std::smatch entrypoint;
  ASSERT_TRUE(std::regex_search(text, entrypoint, std::regex("\\nENTRYPOINT +(\\[[^\\n]*\\])")))
      << "no exec-form ENTRYPOINT";
  const auto words = YAML::Load(entrypoint[1].str()).as<std::vector<std::string>>();  // JSON is YAML
  ASSERT_EQ(words.size(), 3u) << entrypoint[1];
  EXPECT_EQ(words[0], "/usr/bin/tini") << "process 1 must be an init that reaps orphans";
  EXPECT_EQ(words[1], "--");
  EXPECT_EQ(words[2], "quick");
  const std::string runtime = text.substr(text.rfind("\nFROM "));
  EXPECT_TRUE(std::regex_search(runtime, std::regex("[ \\\\\\n]tini[ \\\\\\n]")))
      << "the runtime stage does not install tini";
}

// The runtime stage installs the Debian package of each shared library `quick` links, besides
// libc6 and libgcc-s1, which every Debian image has.
TEST(DockerFiles, RuntimeStageInstallsEveryLibraryTheToolLinks) {
  const std::string quick = quick_binary();
  ASSERT_FALSE(quick.empty());
  const std::string text = dockerfile();
  const auto last_from = text.rfind("\nFROM ");
  ASSERT_NE(last_from, std::string::npos);
  const std::string runtime = text.substr(last_from);

  // Each NEEDED library, its path as the loader finds it, and the package owning that path.
  const CommandResult packages = run_command(
      "q=" + shell_quote(quick) +
      "; for lib in $(objdump -p \"$q\" | awk '/NEEDED/ {print $2}'); do"
      "  path=$(ldd \"$q\" | awk -v lib=\"$lib\" '$1 == lib {print $3}');"
      "  [ -n \"$path\" ] || { echo \"unresolved $lib\"; exit 1; };"
      "  owner=$(dpkg -S \"$path\" 2>/dev/null || dpkg -S \"/usr$path\" 2>/dev/null || dpkg -S \"$(readlink -f "
      "\"$path\")\") || { echo \"no package owns $path\"; exit 1; };"
      "  echo \"${owner%%:*}\"; done");
  ASSERT_EQ(packages.exit_code, 0) << packages.output;
  std::istringstream lines(packages.output);
  int checked = 0;
  for (std::string package; std::getline(lines, package);) {
    if (package.empty() || package == "libc6" || package == "libgcc-s1") continue;
    ++checked;
    EXPECT_TRUE(std::regex_search(
        runtime, std::regex("[ \\\\\\n]" + std::regex_replace(package, std::regex("[.+]"), "\\$&") + "[ \\\\\\n]")))
        << "the runtime stage does not install " << package << ", which build/quick links";
  }
  EXPECT_GE(checked, 5) << "expected libpqxx, libpq, fmt, spdlog, yaml-cpp, libstdc++:\n" << packages.output;
}

}  // namespace
}  // namespace quick::testing
