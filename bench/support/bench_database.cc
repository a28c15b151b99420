#include "support/bench_database.h"

#include <unistd.h>

#include <iostream>

#include "quick/database.h"
#include "quick/migrate.h"

namespace quick::bench {
namespace {

// Drops `name` on the server (FORCE: the experiment's connections may still be open).
void drop_database(const std::string& server_url, const std::string& name) {
  auto admin = quick::connect(quick::with_default_connect_timeout(server_url, 5));
  pqxx::nontransaction session(*admin);
  session.exec("DROP DATABASE IF EXISTS " + session.quote_name(name) + " WITH (FORCE)");
}

}  // namespace

ScratchDatabase::ScratchDatabase(const std::string& server_url, std::string name)
    // The process id keeps concurrent benchmark runs on one server out of each other's way.
    : server_url_(server_url), name_(std::move(name) + "_" + std::to_string(::getpid())) {
  // Before it exists: a signal during the CREATE finds it registered.
  on_signal_ = std::make_unique<CleanupOnSignal>(
      [server_url = server_url_, name = name_] { drop_database(server_url, name); });
  {
    auto admin = quick::connect(server_url_);
    pqxx::nontransaction session(*admin);
    session.exec("DROP DATABASE IF EXISTS " + session.quote_name(name_) + " WITH (FORCE)");
    session.exec("CREATE DATABASE " + session.quote_name(name_) + " TEMPLATE template0");
  }
  url_ = quick::with_database_name(server_url_, name_);
  try {
    auto conn = quick::connect(url_);
    quick::migrate(*conn);
  } catch (...) {
    try {
      drop_database(server_url_, name_);  // no destructor runs for a constructor that throws
    } catch (const std::exception&) {
    }
    throw;
  }
}

ScratchDatabase::~ScratchDatabase() {
  try {
    drop_database(server_url_, name_);
  } catch (const std::exception& error) {
    // Left behind (no later run has this process id to drop it first): say so.
    std::cerr << "quick_bench: could not drop the scratch database " << name_ << ": " << error.what() << std::endl;
  }
}

std::unique_ptr<pqxx::connection> ScratchDatabase::connect() const { return quick::connect(url_); }

pqxx::result ScratchDatabase::exec(const std::string& sql) const {
  auto conn = connect();
  pqxx::nontransaction session(*conn);
  return session.exec(sql);
}

void ScratchDatabase::vacuum() const { exec("VACUUM ANALYZE quick.items, quick.pointers, quick.pointer_pulls"); }

}  // namespace quick::bench
