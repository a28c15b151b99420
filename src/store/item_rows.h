// Decodes the item rows that sql/queries/peek_items.sql and dequeue_items.sql return.
#pragma once

#include <vector>

#include <pqxx/pqxx>

#include "quick/item.h"

namespace quick::store {

Item item_from_row(const pqxx::row& row);
std::vector<Item> items_from_result(const pqxx::result& result);

}  // namespace quick::store
