// The hardening as the catalog records it, over every object of schema quick (docs/security.md),
// so that a function or table added later cannot miss it: every SECURITY DEFINER function pins
// its search_path to pg_catalog, pg_temp; PUBLIC may execute no function and use no table,
// sequence or the schema itself; quick_admin owns the schema and everything in it (migration 0015).
#include <gtest/gtest.h>

#include <string>

#include "support/schema_snapshot.h"
#include "support/test_database.h"

namespace quick::testing {
namespace {

class CatalogTest : public DatabaseTest {
 protected:
  // The rows of `sql` (one text column), one per line, for a readable failure.
  std::string lines(const std::string& sql) {
    std::string all;
    for (const auto& row : query(sql)) all += row[0].as<std::string>() + "\n";
    return all;
  }
};

TEST_F(CatalogTest, EveryDefinerFunctionPinsItsSearchPath) {
  ASSERT_GT(query_value<int>("SELECT count(*) FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace "
                             "WHERE n.nspname = 'quick' AND p.prosecdef"),
            20);
  EXPECT_EQ(lines("SELECT p.oid::regprocedure::text FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace "
                  "WHERE n.nspname = 'quick' AND p.prosecdef "
                  "AND NOT coalesce(p.proconfig, '{}') @> ARRAY['search_path=pg_catalog, pg_temp'] ORDER BY 1"),
            "");
}

TEST_F(CatalogTest, PublicMayUseNothingInSchemaQuick) {
  EXPECT_FALSE(query_value<bool>("SELECT has_schema_privilege('public', 'quick', 'USAGE')"));
  EXPECT_EQ(lines("SELECT p.oid::regprocedure::text FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace "
                  "WHERE n.nspname = 'quick' AND has_function_privilege('public', p.oid, 'EXECUTE') ORDER BY 1"),
            "");
  EXPECT_EQ(lines("SELECT c.oid::regclass::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                  "WHERE n.nspname = 'quick' AND c.relkind IN ('r', 'v', 'm', 'p') "
                  "AND has_table_privilege('public', c.oid, 'SELECT, INSERT, UPDATE, DELETE, TRUNCATE') ORDER BY 1"),
            "");
  EXPECT_EQ(
      lines("SELECT c.oid::regclass::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = 'quick' "
            "AND CASE WHEN c.relkind = 'S' THEN has_sequence_privilege('public', c.oid, 'USAGE, SELECT, UPDATE') END "
            "ORDER BY 1"),
      "");
}

// The definer functions run as their owner: quick_admin, not the login that migrated (here a
// superuser). Anything created later by a login instead of the owner would show here.
TEST_F(CatalogTest, QuickAdminOwnsTheSchemaAndEverythingInIt) {
  EXPECT_EQ(query_value<std::string>("SELECT pg_get_userbyid(nspowner) FROM pg_namespace WHERE nspname = 'quick'"),
            "quick_admin");
  EXPECT_EQ(objects_of_schema_quick_not_owned_by_quick_admin(url()), "");
  EXPECT_GT(query_value<int>("SELECT count(*) FROM pg_proc WHERE pronamespace = 'quick'::regnamespace"), 50);
}

}  // namespace
}  // namespace quick::testing
