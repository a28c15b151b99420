// quick-pg: QuiCK's multi-tenant queue on PostgreSQL. This header includes the whole public API.
//   producer.h  enqueue inside your own transaction
//   item.h      what is enqueued and read back, with the limits of its fields
//   zone.h      peek / dequeue / lease / complete / requeue items of a queue zone
//   consumer.h  the QuiCK consumer (Scanner, Managers, Workers); handler.h, config.h, stats.h
//   database.h  connect (with connection-string validation)
//   migrate.h   create or upgrade the quick schema
//   errors.h    exceptions
// Each header opens with its thread-safety contract. The options, their units, ranges and
// defaults are in config.h and docs/configuration.md.
#pragma once

#include "quick/config.h"
#include "quick/consumer.h"
#include "quick/database.h"
#include "quick/errors.h"
#include "quick/handler.h"
#include "quick/item.h"
#include "quick/logging.h"
#include "quick/metrics.h"
#include "quick/migrate.h"
#include "quick/placement.h"
#include "quick/producer.h"
#include "quick/stats.h"
#include "quick/zone.h"
