#include "support/schema_snapshot.h"

#include <algorithm>
#include <iterator>

#include <pqxx/pqxx>

namespace quick::testing {
namespace {

// Each branch names its kind of object first, so a difference reads as what differs.
constexpr const char* kSnapshotSql = R"sql(
SELECT 'column ' || c.relname || '.' || a.attname || ' #' || a.attnum || ' ' ||
       format_type(a.atttypid, a.atttypmod) || CASE WHEN a.attnotnull THEN ' NOT NULL' ELSE '' END ||
       coalesce(' DEFAULT ' || pg_get_expr(d.adbin, d.adrelid), '') ||
       CASE a.attidentity WHEN '' THEN '' ELSE ' IDENTITY ' || a.attidentity::text END
  FROM pg_attribute a
  JOIN pg_class c ON c.oid = a.attrelid
  JOIN pg_namespace n ON n.oid = c.relnamespace
  LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
 WHERE n.nspname = 'quick' AND a.attnum > 0 AND NOT a.attisdropped AND c.relkind IN ('r', 'v', 'p')
UNION ALL
SELECT 'relation ' || c.relname || ' kind ' || c.relkind::text || ' options ' || coalesce(c.reloptions::text, '{}')
  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
 WHERE n.nspname = 'quick' AND c.relkind IN ('r', 'v', 'p', 'i', 'S')
UNION ALL
SELECT 'constraint ' || c.conrelid::regclass || ' ' || c.conname || ' ' || pg_get_constraintdef(c.oid)
  FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace
 WHERE n.nspname = 'quick'
UNION ALL
SELECT 'index ' || pg_get_indexdef(i.indexrelid)
  FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_namespace n ON n.oid = c.relnamespace
 WHERE n.nspname = 'quick'
UNION ALL
SELECT 'view ' || c.relname || ' ' || pg_get_viewdef(c.oid)
  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
 WHERE n.nspname = 'quick' AND c.relkind = 'v'
UNION ALL
SELECT 'function ' || p.oid::regprocedure || ' ' || pg_get_functiondef(p.oid)
  FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
 WHERE n.nspname = 'quick'
UNION ALL
SELECT 'type ' || t.typname || ' ' || string_agg(e.enumlabel, ',' ORDER BY e.enumsortorder)
  FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace JOIN pg_enum e ON e.enumtypid = t.oid
 WHERE n.nspname = 'quick'
 GROUP BY t.typname
UNION ALL
SELECT 'comment ' || d.classoid::regclass || ' ' ||
       CASE WHEN d.classoid = 'pg_proc'::regclass THEN d.objoid::regprocedure::text
            WHEN d.classoid = 'pg_class'::regclass THEN d.objoid::regclass::text
            ELSE d.objoid::text END || ' #' || d.objsubid || ' ' || d.description
  FROM pg_description d
 WHERE (d.classoid = 'pg_proc'::regclass
        AND d.objoid IN (SELECT p.oid FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
                          WHERE n.nspname = 'quick'))
    OR (d.classoid = 'pg_class'::regclass
        AND d.objoid IN (SELECT c.oid FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                          WHERE n.nspname = 'quick'))
UNION ALL
SELECT 'privileges of schema quick ' || coalesce(n.nspacl::text, 'default') FROM pg_namespace n WHERE n.nspname = 'quick'
UNION ALL
SELECT 'owner of schema quick ' || pg_get_userbyid(n.nspowner) FROM pg_namespace n WHERE n.nspname = 'quick'
UNION ALL
SELECT 'owner of ' || c.relname || ' ' || pg_get_userbyid(c.relowner)
  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
 WHERE n.nspname = 'quick'
UNION ALL
SELECT 'owner of ' || p.oid::regprocedure || ' ' || pg_get_userbyid(p.proowner)
  FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
 WHERE n.nspname = 'quick'
UNION ALL
SELECT 'owner of type ' || t.typname || ' ' || pg_get_userbyid(t.typowner)
  FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
 WHERE n.nspname = 'quick'
UNION ALL
SELECT 'privileges of ' || c.relname || ' ' || coalesce(c.relacl::text, 'default') || ' rls ' || c.relrowsecurity
  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
 WHERE n.nspname = 'quick' AND c.relkind IN ('r', 'v', 'S')
UNION ALL
SELECT 'privileges of ' || p.oid::regprocedure || ' ' || coalesce(p.proacl::text, 'default')
  FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
 WHERE n.nspname = 'quick'
UNION ALL
SELECT 'policy ' || p.tablename || ' ' || p.policyname || ' ' || p.cmd || ' ' || p.roles::text || ' ' ||
       coalesce(p.qual, '') || ' ' || coalesce(p.with_check, '')
  FROM pg_policies p
 WHERE p.schemaname = 'quick'
ORDER BY 1
)sql";

}  // namespace

std::vector<std::string> schema_snapshot(const std::string& url) {
  pqxx::connection conn(url);
  pqxx::nontransaction session(conn);
  std::vector<std::string> lines;
  for (const auto& row : session.exec(kSnapshotSql)) lines.push_back(row[0].as<std::string>());
  std::sort(lines.begin(), lines.end());
  return lines;
}

std::string schema_difference(const std::vector<std::string>& expected, const std::vector<std::string>& actual) {
  std::vector<std::string> missing, extra;
  std::set_difference(expected.begin(), expected.end(), actual.begin(), actual.end(), std::back_inserter(missing));
  std::set_difference(actual.begin(), actual.end(), expected.begin(), expected.end(), std::back_inserter(extra));
  std::string text;
  for (const auto& line : missing) text += "- " + line + "\n";
  for (const auto& line : extra) text += "+ " + line + "\n";
  return text;
}

}  // namespace quick::testing

namespace quick::testing {

std::string every_row_of_schema_quick(const std::string& url) {
  pqxx::connection conn(url);
  pqxx::nontransaction session(conn);
  std::string all;
  for (const auto& table : session.exec("SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = "
                                        "c.relnamespace WHERE n.nspname = 'quick' AND c.relkind = 'r' ORDER BY 1")) {
    const std::string name = table[0].as<std::string>();
    for (const auto& row :
         session.exec("SELECT t::text AS r FROM quick." + session.quote_name(name) + " t ORDER BY r")) {
      all += name + ": " + row[0].as<std::string>() + "\n";
    }
  }
  return all;
}

std::string objects_of_schema_quick_not_owned_by_quick_admin(const std::string& url) {
  pqxx::connection conn(url);
  pqxx::nontransaction session(conn);
  std::string found;
  for (const auto& row :
       session.exec("SELECT 'schema quick ' || pg_get_userbyid(nspowner) FROM pg_namespace "
                    " WHERE nspname = 'quick' AND pg_get_userbyid(nspowner) <> 'quick_admin' "
                    "UNION ALL SELECT c.oid::regclass::text || ' (' || c.relkind::text || ') ' || "
                    "       pg_get_userbyid(c.relowner) FROM pg_class c "
                    " WHERE c.relnamespace = 'quick'::regnamespace AND pg_get_userbyid(c.relowner) <> 'quick_admin' "
                    "UNION ALL SELECT p.oid::regprocedure::text || ' ' || pg_get_userbyid(p.proowner) FROM pg_proc p "
                    " WHERE p.pronamespace = 'quick'::regnamespace AND pg_get_userbyid(p.proowner) <> 'quick_admin' "
                    "UNION ALL SELECT t.oid::regtype::text || ' ' || pg_get_userbyid(t.typowner) FROM pg_type t "
                    " WHERE t.typnamespace = 'quick'::regnamespace AND pg_get_userbyid(t.typowner) <> 'quick_admin' "
                    "ORDER BY 1")) {
    found += row[0].as<std::string>() + "\n";
  }
  return found;
}

}  // namespace quick::testing
