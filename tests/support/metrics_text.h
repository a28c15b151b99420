// Reading a Prometheus text page in the metrics tests: samples by their series, families' HELP
// and TYPE lines. Only what the tests check; not a general parser.
#pragma once

#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace quick::testing {

struct MetricsPage {
  std::map<std::string, double> samples;     // "name{labels}" as written -> value
  std::map<std::string, std::string> types;  // family -> counter, gauge, histogram
  std::map<std::string, int> type_lines;     // family -> how many # TYPE lines name it
  std::map<std::string, std::string> help;   // family -> help text
  std::vector<std::string> series_in_order;  // as written

  bool has(const std::string& series) const { return samples.count(series) > 0; }
  double at(const std::string& series) const {
    const auto found = samples.find(series);
    return found == samples.end() ? -1 : found->second;
  }
  // The series of family `name` (exactly that name before '{' or ' ').
  std::vector<std::string> series_of(const std::string& name) const {
    std::vector<std::string> series;
    for (const auto& line : series_in_order) {
      if (line.compare(0, name.size(), name) == 0 && (line.size() == name.size() || line[name.size()] == '{')) {
        series.push_back(line);
      }
    }
    return series;
  }
};

inline MetricsPage parse_metrics(const std::string& text) {
  MetricsPage page;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("# TYPE ", 0) == 0) {
      std::istringstream words(line.substr(7));
      std::string name, type;
      words >> name >> type;
      page.types[name] = type;
      ++page.type_lines[name];
    } else if (line.rfind("# HELP ", 0) == 0) {
      const auto rest = line.substr(7);
      const auto space = rest.find(' ');
      page.help[rest.substr(0, space)] = space == std::string::npos ? "" : rest.substr(space + 1);
    } else if (!line.empty() && line[0] != '#') {
      const auto space = line.rfind(' ');
      const auto series = line.substr(0, space);
      page.samples[series] = std::stod(line.substr(space + 1));
      page.series_in_order.push_back(series);
    }
  }
  return page;
}

}  // namespace quick::testing
