// quick-pg: QuiCK's multi-tenant queue on PostgreSQL. This header includes the whole public API.
//   producer.h  enqueue inside your own transaction
//   zone.h      peek / dequeue / lease / complete / requeue items of a queue zone
//   consumer.h  the QuiCK consumer (Scanner, Managers, Workers); handler.h, config.h, stats.h
//   database.h  connect (with connection-string validation)
//   migrate.h   create or upgrade the quick schema
//   errors.h    exceptions
#pragma once

#include "quick/config.h"
#include "quick/consumer.h"
#include "quick/database.h"
#include "quick/errors.h"
#include "quick/handler.h"
#include "quick/item.h"
#include "quick/migrate.h"
#include "quick/producer.h"
#include "quick/stats.h"
#include "quick/zone.h"
