// Runs quick-pg consumers for a benchmark: `consumers` independent quick::Consumer instances
// (each with its own Scanner, Managers, Workers and connections), one handler for every job
// type the experiment uses.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "quick/consumer.h"

namespace quick::bench {

class QuickPool {
 public:
  QuickPool(const ConsumerConfig& config, int consumers, const std::vector<std::string>& job_types, Handler handler);
  ~QuickPool() { stop(); }

  void start();
  void stop();
  std::uint64_t done() const;         // items completed, all consumers
  ConsumerStats total_stats() const;  // sum_consumer_stats of the consumers
  const std::vector<std::unique_ptr<Consumer>>& consumers() const { return consumers_; }

 private:
  std::vector<std::unique_ptr<Consumer>> consumers_;
};

// The counters of several consumers' stats summed; pointers_per_visit and live_consumers the
// largest, in_order_role whether any holds it; the latency summaries the first's (histograms of
// different consumers are not merged).
ConsumerStats sum_consumer_stats(const std::vector<ConsumerStats>& stats);

// Database connections one consumer opens with `config` (Scanner, Managers, writer: acknowledgments
// and lease extensions; Workers connect only for handlers that open a transaction).
int connections_per_consumer(const ConsumerConfig& config);

}  // namespace quick::bench
