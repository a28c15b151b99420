// The quick schema of a database as text, for comparing two databases object by object.
#pragma once

#include <string>
#include <vector>

namespace quick::testing {

// One sorted line per object of schema quick: every column (type, nullability, default,
// identity), constraint, index, table option, view (pg_get_viewdef), function
// (pg_get_functiondef), enum type, comment, privilege (schema, relations, functions) and
// row-level security policy.
std::vector<std::string> schema_snapshot(const std::string& url);

// Every row of every table of schema quick, as text (one line per row, "table: row"): what a bad
// input's "changes nothing" compares.
std::string every_row_of_schema_quick(const std::string& url);

// The objects of schema quick (the schema itself, relations, functions, types) that do not belong
// to quick_admin, one "name owner" line each, sorted; empty when quick_admin owns everything
// (migration 0015).
std::string objects_of_schema_quick_not_owned_by_quick_admin(const std::string& url);

// The lines only in `expected` ("- ...") and only in `actual` ("+ ..."); empty when equal.
std::string schema_difference(const std::vector<std::string>& expected, const std::vector<std::string>& actual);

}  // namespace quick::testing
