// Tenants placed across several databases, producers routed to them, and tenants moved with their
// queued work (docs/scaling.md).
//
// Every database is a full quick-pg node (items, pointers, consumers). One of them, the
// *directory*, also says which database holds which tenant (quick.tenant_database). A move copies a
// tenant's items from its database to another in two transactions committed together by
// two-phase commit (PREPARE TRANSACTION; the clusters need max_prepared_transactions > 0), and
// leaves a fence at the source: from then on an enqueue for the tenant there fails with
// TenantMoved, which the Router catches to send the work where the tenant is now.
//
// Thread safety: a Router may be shared by threads (its cache and pool are locked). The move
// functions keep no state; a TenantMove belongs to one thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <pqxx/pqxx>

#include "quick/config.h"
#include "quick/errors.h"
#include "quick/item.h"

namespace quick {

// The databases and where their directory is. Names are the ones every program that routes or
// moves uses (they are written into the directory and into the fences), so give every program the
// same names for the same databases.
struct PlacementConfig {
  std::vector<DatabaseConfig> databases;  // at least one; names unique and 1..100 characters
  std::string directory;                  // the name of the database holding the directory
  // How long the Router trusts what the directory said about a tenant. A tenant that moved is
  // found at once anyway (its old database refuses it); this bounds only how long a router keeps
  // asking the old database first. Range 0..1h. Default 30s.
  Millis route_cache_ttl{30000};
  // Tenants remembered by the Router; the least recently learnt are forgotten first. >= 1.
  // Default 100000.
  std::size_t route_cache_max = 100000;
};

// Throws InvalidArgument naming the first invalid field.
void validate(const PlacementConfig& config);

// The databases of a consumer configuration, with `directory` as the directory ("" for the first
// database). What `quick tenant` uses with --config.
PlacementConfig placement_from(const ConsumerConfig& config, const std::string& directory = "");

// The tenant key of the local zone `name` ('@local:' + name). Local items belong to no tenant
// (maintenance of one whole database, say): enqueue them with a tenant key from here into the
// database they concern; they are served like any zone and never placed or moved. Throws
// InvalidArgument for a name outside 1..193 characters.
std::string local_tenant(const std::string& name);
bool is_local_tenant(const std::string& tenant);

// Registers `config.databases` in the directory (quick.add_placement_database), the ones named in
// `default_rule` (all of them when empty) as sharing the tenants nobody placed. Idempotent: a name
// registered already is left as it is. Returns the names it added.
std::vector<std::string> register_placement_databases(const PlacementConfig& config,
                                                      const std::vector<std::string>& default_rule = {});

// Sends each tenant's work to the database that holds it.
class Router {
 public:
  explicit Router(PlacementConfig config);  // validates; connects lazily
  ~Router();
  Router(const Router&) = delete;
  Router& operator=(const Router&) = delete;

  // The name of the database holding `tenant`: the cache, else the directory. Throws
  // InvalidArgument for a local tenant (it has no placement: pick its database yourself) or
  // when the directory places it in a database this configuration does not name.
  std::string database_for(const std::string& tenant);
  // The configuration of database `name`; throws InvalidArgument for an unknown name.
  const DatabaseConfig& database(const std::string& name) const;
  // A new connection to the database holding `tenant`.
  std::unique_ptr<pqxx::connection> connect_for(const std::string& tenant);

  // What a TenantMoved said: the tenant is in moved_to now.
  void learn(const TenantMoved& moved);
  // Forgets what the cache says about `tenant`.
  void forget(const std::string& tenant);

  // Runs `body` in a transaction on the database holding `tenant` and commits it. When the
  // database refuses an enqueue for the tenant because it moved (TenantMoved, from body or from
  // the commit), the transaction is rolled back and `body` runs again in a new one at the
  // tenant's new database, up to 3 times; so body must write only through the transaction it is
  // given. Other exceptions pass through (the transaction rolled back).
  void in_tenant_transaction(const std::string& tenant, const std::function<void(pqxx::work&)>& body);

  // One-call enqueue (quick::enqueue) into the tenant's database, retried there after a move.
  EnqueueResult enqueue(const NewItem& item);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// What to do when a move waits: for locks (a visit, a producer's open transaction holding the
// tenant), and how much to copy per statement.
struct MoveOptions {
  // The longest a move waits for one lock (lock_timeout of its sessions) before it gives up and
  // rolls back, changing nothing. Range 1ms..10min. Default 10s.
  Millis lock_timeout{10000};
  // Items per statement when copying. Range 1..100000. Default 1000.
  int batch_items = 1000;
};

// A move's steps, in order. A hook (TenantMove::on_step) is told of each as it completes; tests use
// it to interrupt a move after any step.
enum class MoveStep {
  kLocked,               // both transactions hold the tenant's locks; the source is fenced
  kCopied,               // the items are in the destination's transaction, gone from the source's
  kDestinationPrepared,  // PREPARE TRANSACTION at the destination
  kSourcePrepared,       // PREPARE TRANSACTION at the source
  kDecided,              // the directory recorded the commit decision and the new placement
  kDestinationCommitted,
  kSourceCommitted,
};
const char* to_string(MoveStep step);

struct MoveResult {
  std::string move_id;  // a UUID; names the prepared transactions (quick_move:<id>:source|destination)
  std::string tenant;
  std::string from_database;
  std::string to_database;
  std::int64_t items = 0;       // items moved
  std::int64_t dead_items = 0;  // dead items moved
  bool already_there = false;   // nothing to do: the tenant was in to_database
  Millis took{0};
};

// One move of one tenant, in transactions the caller opened, so that the caller's own rows for
// the tenant move in the same transactions:
//
//   TenantMove move("acme", "db1", "db2");
//   pqxx::work source(source_conn), destination(destination_conn);
//   move.move_rows(source, destination);          // the queue's rows
//   ... move the application's rows with source and destination ...
//   move.commit(source, destination, directory_conn);
//
// The source must be the database holding the tenant (else move_rows throws TenantMoved). Both
// transactions must be READ COMMITTED and must not have sent NOTIFY (PREPARE TRANSACTION refuses).
class TenantMove {
 public:
  TenantMove(std::string tenant, std::string from_database, std::string to_database, MoveOptions options = {});

  const std::string& move_id() const { return result_.move_id; }
  const MoveResult& result() const { return result_; }
  // Called after each step completes; an exception it throws interrupts the move there.
  std::function<void(MoveStep)> on_step;

  // Locks and fences the tenant, copies its items, dead items and pause to the destination and
  // deletes them at the source. Throws (the caller's transactions must then be rolled back) when
  // a lock is not granted within lock_timeout, when the source does not hold the tenant
  // (TenantMoved), or when a database fails.
  void move_rows(pqxx::transaction_base& source, pqxx::transaction_base& destination);

  // Two-phase commit: prepares the destination's transaction, then the source's, records the
  // decision in the directory (`directory` must have no transaction open, and have databases
  // registered: else InvalidArgument, before anything is prepared), then commits both.
  // Ends both transactions (do not use them afterwards). Before the decision, any failure rolls
  // back both transactions and rethrows: the move did not happen. That includes a transaction that
  // had failed already (an SQL error the caller caught and went on from, which libpqxx does not
  // end): Postgres rolls it back at PREPARE TRANSACTION, and commit throws Error. After the
  // decision, a failure, or a prepared transaction that another process ended meanwhile, leaves
  // the move decided but in doubt: MoveInDoubt is thrown, and resolve_moves (or another move of
  // the tenant) commits what is still prepared.
  void commit(pqxx::transaction_base& source, pqxx::transaction_base& destination, pqxx::connection_base& directory);

 private:
  void step(MoveStep step);
  MoveOptions options_;
  MoveResult result_;
  std::chrono::steady_clock::time_point started_;
  bool rows_moved_ = false;
};

// Moves `tenant` from the database that holds it (the directory says which) to database `to`, in
// new connections: resolves any interrupted move of any tenant first (resolve_moves, whose errors
// it passes on: nothing is moved against a directory with no databases registered, or while a move
// it has no record of is prepared), then runs a TenantMove. `move_application_rows`, when given, is called with the two
// transactions after the queue's rows moved, to move the application's own rows in them. Moving a tenant to where it is
// does nothing (result.already_there).
MoveResult move_tenant(
    const PlacementConfig& config, const std::string& tenant, const std::string& to, const MoveOptions& options = {},
    const std::function<void(pqxx::work& source, pqxx::work& destination)>& move_application_rows = {},
    const std::function<void(MoveStep)>& on_step = {});

// A prepared transaction of an interrupted move, and what recovery did with it.
struct ResolvedMove {
  std::string database;  // where the prepared transaction was
  std::string gid;       // quick_move:<move id>:source|destination
  std::string move_id;
  std::string decision;  // "commit" or "abort"; "" for one left prepared (below)
};

// Ends the moves their movers left unfinished: finds the prepared transactions of moves in every
// database of `config`, and the moves the directory has as begun but undecided, and ends each as
// its decision says: commit when the directory recorded one; otherwise it records "abort" (so that
// a mover still running cannot commit afterwards) and rolls back. A move whose mover is still
// running (it holds the move's liveness lock in the directory; one that died releases it with its
// session, waited for up to 2 s) is left to it. Safe to run at any time, by several processes at
// once. Returns the prepared transactions it ended.
//
// A mover records its move in the directory before it prepares anything, so a prepared
// transaction whose move the directory has no record of was begun against another directory
// (`config` names the wrong one: the databases listed in another order, a wrong --directory),
// where it may be decided "commit", or its mover still running: it is never ended. Such
// transactions are appended to `*unknown` (decision "") when it is given; otherwise, once the
// other moves are ended, Error is thrown naming them. InvalidArgument, before anything is ended,
// when config.directory has no databases registered (it is not a directory).
std::vector<ResolvedMove> resolve_moves(const PlacementConfig& config, std::vector<ResolvedMove>* unknown = nullptr);

}  // namespace quick
