#include "metrics/exposition.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace quick::metrics {
namespace {

const char* type_name(MetricType type) {
  switch (type) {
    case MetricType::kCounter: return "counter";
    case MetricType::kGauge: return "gauge";
    case MetricType::kHistogram: return "histogram";
  }
  return "untyped";
}

// HELP text escapes backslash and line feed only.
std::string escape_help(const std::string& help) {
  std::string escaped;
  for (const char c : help) {
    if (c == '\\') escaped += "\\\\";
    else if (c == '\n') escaped += "\\n";
    else escaped += c;
  }
  return escaped;
}

std::string sample_line(const std::string& name, const Labels& labels, double value) {
  std::string line = name;
  if (!labels.empty()) {
    line += '{';
    for (std::size_t i = 0; i < labels.size(); ++i) {
      if (i > 0) line += ',';
      line += labels[i].first + "=\"" + escape_label_value(labels[i].second) + '"';
    }
    line += '}';
  }
  return line + ' ' + format_value(value);
}

}  // namespace

std::string escape_label_value(const std::string& value) {
  std::string escaped;
  escaped.reserve(value.size());
  for (const char c : value) {
    if (c == '\\') escaped += "\\\\";
    else if (c == '"') escaped += "\\\"";
    else if (c == '\n') escaped += "\\n";
    else escaped += c;
  }
  return escaped;
}

std::string format_value(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  return fmt::format("{}", value);
}

Exposition::Family& Exposition::family(const std::string& name, MetricType type, const std::string& help) {
  const auto found = std::find_if(families_.begin(), families_.end(),
                                  [&](const Family& family) { return family.name == name; });
  if (found != families_.end()) return *found;
  families_.push_back(Family{name, type, help, {}});
  return families_.back();
}

void Exposition::add(const std::string& name, MetricType type, const std::string& help, const Labels& labels,
                     double value) {
  family(name, type, help).samples.push_back(sample_line(name, labels, value));
}

void Exposition::add_histogram(const std::string& name, const std::string& help, const Labels& labels,
                               const LatencySummary& latency) {
  auto& samples = family(name, MetricType::kHistogram, help).samples;
  Labels with_bound = labels;
  with_bound.emplace_back("le", "");
  for (std::size_t i = 0; i < kLatencyBucketBoundsMs.size(); ++i) {
    with_bound.back().second = format_value(kLatencyBucketBoundsMs[i] / 1000.0);
    samples.push_back(sample_line(name + "_bucket", with_bound, static_cast<double>(latency.cumulative_counts[i])));
  }
  with_bound.back().second = "+Inf";
  samples.push_back(sample_line(name + "_bucket", with_bound, static_cast<double>(latency.count)));
  samples.push_back(sample_line(name + "_sum", labels, latency.sum_ms / 1000.0));
  samples.push_back(sample_line(name + "_count", labels, static_cast<double>(latency.count)));
}

std::string Exposition::text() const {
  std::string text;
  for (const auto& family : families_) {
    text += "# HELP " + family.name + ' ' + escape_help(family.help) + '\n';
    text += "# TYPE " + family.name + ' ' + type_name(family.type) + '\n';
    for (const auto& sample : family.samples) text += sample + '\n';
  }
  return text;
}

}  // namespace quick::metrics
