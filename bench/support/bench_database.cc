#include "support/bench_database.h"

#include <unistd.h>

#include "quick/database.h"
#include "quick/migrate.h"

namespace quick::bench {

ScratchDatabase::ScratchDatabase(const std::string& server_url, std::string name)
    // The process id keeps concurrent benchmark runs on one server out of each other's way.
    : server_url_(server_url), name_(std::move(name) + "_" + std::to_string(::getpid())) {
  {
    auto admin = quick::connect(server_url_);
    pqxx::nontransaction session(*admin);
    session.exec("DROP DATABASE IF EXISTS " + session.quote_name(name_) + " WITH (FORCE)");
    session.exec("CREATE DATABASE " + session.quote_name(name_) + " TEMPLATE template0");
  }
  url_ = quick::with_database_name(server_url_, name_);
  auto conn = quick::connect(url_);
  quick::migrate(*conn);
}

ScratchDatabase::~ScratchDatabase() {
  try {
    auto admin = quick::connect(server_url_);
    pqxx::nontransaction session(*admin);
    session.exec("DROP DATABASE IF EXISTS " + session.quote_name(name_) + " WITH (FORCE)");
  } catch (const std::exception&) {
    // Left behind; the next run drops it first.
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
