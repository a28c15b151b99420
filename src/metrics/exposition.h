// Builds a page in the Prometheus text format (version 0.0.4): samples are grouped by metric
// family, each family once with its # HELP and # TYPE lines, whatever order they are added in
// (several databases add to the same families).
//
// Written by hand rather than with a client library: the format is a few lines of text, Debian
// packages no Prometheus client for C++ (prometheus-cpp is not in bookworm), and the values come
// from snapshots (ConsumerStats, a database round), not from live registered instruments.
//
// Thread safety: none (build one per render).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "quick/stats.h"

namespace quick::metrics {

using Labels = std::vector<std::pair<std::string, std::string>>;

enum class MetricType { kCounter, kGauge, kHistogram };

class Exposition {
 public:
  // One sample of family `name` (a counter's name ends in _total).
  void add(const std::string& name, MetricType type, const std::string& help, const Labels& labels, double value);
  // A histogram in seconds from a latency summary: cumulative _bucket{le=...} at
  // kLatencyBucketBoundsMs and +Inf, _sum and _count.
  void add_histogram(const std::string& name, const std::string& help, const Labels& labels,
                     const LatencySummary& latency);
  std::string text() const;

 private:
  struct Family {
    std::string name;
    MetricType type;
    std::string help;
    std::vector<std::string> samples;  // complete lines
  };
  Family& family(const std::string& name, MetricType type, const std::string& help);
  std::vector<Family> families_;
};

// A label value escaped for the text format (backslash, double quote, line feed).
std::string escape_label_value(const std::string& value);
// A sample value: shortest exact decimal, +Inf, -Inf or NaN.
std::string format_value(double value);

}  // namespace quick::metrics
