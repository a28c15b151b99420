// Where a benchmark run writes: one CSV per experiment (raw numbers), summary.md (tables, the
// machine, the date), targets.csv (each target: measured, required, pass), and the plots that
// scripts/bench draws from the CSVs with gnuplot.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace quick::bench {

struct TargetCheck {
  std::string experiment;
  std::string metric;
  double measured = 0;
  std::string requirement;  // e.g. ">= 0.75x baseline (batch 10)"
  bool met = false;
};

class ResultsFolder {
 public:
  explicit ResultsFolder(std::filesystem::path dir);

  const std::filesystem::path& dir() const { return dir_; }

  void write_csv(const std::string& file_name, const std::vector<std::string>& header,
                 const std::vector<std::vector<std::string>>& rows) const;

  // Markdown appended to summary.md, in order.
  void add_section(const std::string& markdown);
  void add_target(TargetCheck target);

  // Writes summary.md (preamble, then the sections, then the targets table) and targets.csv.
  void finish(const std::string& preamble_markdown) const;

 private:
  std::filesystem::path dir_;
  std::vector<std::string> sections_;
  std::vector<TargetCheck> targets_;
};

// A Markdown table.
std::string markdown_table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows);

// Fixed-point text for numbers in tables and CSVs.
std::string fixed(double value, int decimals = 1);

}  // namespace quick::bench
