// The two implementations of the enqueue protocol (docs/protocol.md, "Where the enqueue protocol
// lives"), as SQL a test session can run: the plpgsql functions any client calls, and the C++
// producer's fast-path statements, read from the very files the library embeds.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace quick::testing {

enum class EnqueuePath {
  kSqlFunction,    // SELECT item_id FROM quick.enqueue(tenant, job_type)
  kFastPath,       // sql/queries/enqueue_into_existing_zone.sql: quick.enqueue_into_existing_zone
  kBatchFastPath,  // sql/queries/enqueue_batch_into_existing_zones.sql, a batch of one
};

const std::vector<EnqueuePath>& every_enqueue_path();
std::string enqueue_path_name(EnqueuePath path);  // for test names: "SqlFunction", ...

// One item of `job_type` for `tenant` through `path`: one statement, inside the session's
// transaction. It returns a row for the item, except that a fast path returns none when the
// tenant has no pointer (the producer then falls back to the SQL function).
std::string enqueue_statement(EnqueuePath path, const std::string& tenant, const std::string& job_type = "job");

// sql/queries/<name>.sql from the source tree with its $n parameters replaced by SQL literals.
std::string query_file_with_literals(const std::string& name,
                                     const std::vector<std::pair<std::string, std::string>>& parameters);

}  // namespace quick::testing
