// The consumer's metrics, from a ConsumerStats snapshot: its counters, per job type where
// docs/operations.md#metrics says so, and its latency histograms. Every sample carries
// consumer="<consumer id>".
#pragma once

#include <string>

#include "metrics/exposition.h"
#include "quick/stats.h"

namespace quick::metrics {

void add_consumer_metrics(Exposition& out, const std::string& consumer_id, const ConsumerStats& stats);

}  // namespace quick::metrics
