#include "support/results_folder.h"

#include <fstream>
#include <iomanip>
#include <sstream>
#include <stdexcept>

namespace quick::bench {

ResultsFolder::ResultsFolder(std::filesystem::path dir) : dir_(std::move(dir)) {
  std::filesystem::create_directories(dir_);
}

void ResultsFolder::write_csv(const std::string& file_name, const std::vector<std::string>& header,
                              const std::vector<std::vector<std::string>>& rows) const {
  std::ofstream out(dir_ / file_name);
  auto line = [&out](const std::vector<std::string>& cells) {
    for (std::size_t i = 0; i < cells.size(); ++i) out << (i ? "," : "") << cells[i];
    out << "\n";
  };
  line(header);
  for (const auto& row : rows) line(row);
  if (!out) throw std::runtime_error("could not write " + (dir_ / file_name).string());
}

void ResultsFolder::add_section(const std::string& markdown) { sections_.push_back(markdown); }

void ResultsFolder::add_target(TargetCheck target) { targets_.push_back(std::move(target)); }

void ResultsFolder::finish(const std::string& preamble_markdown) const {
  std::ofstream summary(dir_ / "summary.md");
  summary << preamble_markdown << "\n";
  if (!targets_.empty()) {
    std::vector<std::vector<std::string>> rows;
    for (const auto& target : targets_) {
      rows.push_back({target.experiment, target.metric, fixed(target.measured, 3), target.requirement,
                      target.met ? "met" : "**missed**"});
    }
    summary << "## Targets\n\n" << markdown_table({"experiment", "metric", "measured", "target", ""}, rows) << "\n";
  }
  for (const auto& section : sections_) summary << section << "\n";
  std::vector<std::vector<std::string>> rows;
  for (const auto& target : targets_) {
    rows.push_back({target.experiment, "\"" + target.metric + "\"", fixed(target.measured, 4),
                    "\"" + target.requirement + "\"", target.met ? "1" : "0"});
  }
  write_csv("targets.csv", {"experiment", "metric", "measured", "target", "met"}, rows);
}

std::string markdown_table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows) {
  std::ostringstream out;
  out << "|";
  for (const auto& cell : header) out << " " << cell << " |";
  out << "\n|";
  for (std::size_t i = 0; i < header.size(); ++i) out << "---|";
  out << "\n";
  for (const auto& row : rows) {
    out << "|";
    for (const auto& cell : row) out << " " << cell << " |";
    out << "\n";
  }
  return out.str();
}

std::string fixed(double value, int decimals) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(decimals) << value;
  return out.str();
}

}  // namespace quick::bench
