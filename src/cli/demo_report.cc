#include "cli/demo_report.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <memory>
#include <ostream>
#include <sstream>

namespace quick::cli {
namespace {

std::string fixed(double value, int digits) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(digits) << value;
  return out.str();
}

std::string optional_ms(const std::optional<double>& ms) { return ms ? human_ms(*ms) : "-"; }

// "12x", "2.4x": how many times longer `slow` took than `fast`.
std::string times(double slow, double fast) {
  const double ratio = slow / std::max(fast, 0.001);
  return fixed(ratio, ratio >= 10 ? 0 : 1) + "x";
}

constexpr std::size_t kWidth = 100;  // the summary's lines, at most

// `text` with each of its lines broken at spaces into lines of at most `width` characters; the
// continuation lines are indented, so that each sentence stands out.
std::string wrap(const std::string& text, std::size_t width) {
  std::istringstream lines(text);
  std::string wrapped;
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    std::size_t column = 0;
    for (std::string word; words >> word;) {
      if (column > 0 && column + 1 + word.size() > width) {
        wrapped += "\n  ";
        column = 2;
      } else if (column > 0) {
        wrapped += " ";
        ++column;
      }
      wrapped += word;
      column += word.size();
    }
    wrapped += "\n";
  }
  return wrapped;
}

// Columns of text: the first left-aligned, the others right-aligned (they hold numbers).
void print_table(std::ostream& out, const std::vector<std::string>& header,
                 const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> widths(header.size());
  for (std::size_t c = 0; c < header.size(); ++c) {
    widths[c] = header[c].size();
    for (const auto& row : rows) widths[c] = std::max(widths[c], row[c].size());
  }
  auto print_row = [&](const std::vector<std::string>& row) {
    for (std::size_t c = 0; c < row.size(); ++c) {
      out << (c ? " | " : " ") << (c ? std::right : std::left) << std::setw(static_cast<int>(widths[c])) << row[c];
    }
    out << std::left << "\n";
  };
  print_row(header);
  for (std::size_t c = 0; c < header.size(); ++c) out << (c ? "-+-" : "-") << std::string(widths[c], '-');
  out << "\n";
  for (const auto& row : rows) print_row(row);
}

}  // namespace

std::string human_ms(double ms) {
  if (ms < 100) return fixed(ms, 1) + " ms";
  if (ms < 1000) return fixed(ms, 0) + " ms";
  return fixed(ms / 1000, ms < 10000 ? 2 : 1) + " s";
}

std::string human_number(double value) {
  return std::fabs(value - std::round(value)) < 1e-9 ? fixed(value, 0) : fixed(value, 1);
}

DemoProgressPrinter progress_printer(std::ostream& out, bool terminal) {
  auto printed_second = std::make_shared<int>(-1);  // off a terminal, the last line of a run may repeat a tick
  return [&out, terminal, printed_second](const std::string& system, const DemoProgress& progress, bool last) {
    std::ostringstream line;
    line << "  " << std::left << std::setw(11) << system << std::right << std::setw(4) << progress.second << " s"
         << "   noisy jobs left " << std::setw(6) << progress.noisy_left << "   quiet jobs waiting " << std::setw(5)
         << progress.quiet_waiting << "   quiet p99 so far " << std::setw(9) << optional_ms(progress.quiet_p99_ms);
    if (terminal) {
      out << "\r" << line.str() << "\033[K" << (last ? "\n" : "") << std::flush;
    } else if (!last || progress.second != *printed_second) {
      out << line.str() << std::endl;
    }
    *printed_second = last ? -1 : progress.second;
  };
}

void print_comparison(std::ostream& out, const std::vector<DemoRun>& runs) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& run : runs) {
    const bool no_backlog = run.backlog == 0;
    rows.push_back({run.system + (run.interrupted ? " (stopped)" : ""), std::to_string(run.quiet_pickup_ms.size()),
                    optional_ms(run.quiet_percentile_ms(0.50)), optional_ms(run.quiet_percentile_ms(0.99)),
                    optional_ms(run.quiet_percentile_ms(1.0)),
                    no_backlog            ? "-"
                    : run.noisy_drained_s ? human_ms(*run.noisy_drained_s * 1000)
                                          : "not yet",
                    std::to_string(run.jobs_done)});
  }
  print_table(out, {"queue", "quiet jobs", "quiet p50", "quiet p99", "quiet max", "backlog drained", "jobs done"},
              rows);
  out << "  quiet pNN: time from a quiet tenant's enqueue to a worker starting its job;\n"
      << "  backlog drained: time from the workers' start until every noisy job was done.\n";
}

void print_summary(std::ostream& wrapped_out, const DemoRun& quick, const DemoRun& fifo) {
  std::ostringstream out;
  const auto quick_p99 = quick.quiet_percentile_ms(0.99);
  const auto fifo_p99 = fifo.quiet_percentile_ms(0.99);
  if (quick_p99 && fifo_p99) {
    out << "Quiet tenants' jobs started within " << human_ms(*quick_p99) << " (p99) with quick-pg and within "
        << human_ms(*fifo_p99) << " with the plain FIFO queue";
    if (*fifo_p99 >= 1.5 * *quick_p99) {
      out << ": " << times(*fifo_p99, *quick_p99) << " longer in the FIFO queue.\n";
    } else if (*quick_p99 >= 1.5 * *fifo_p99) {
      out << ": " << times(*quick_p99, *fifo_p99) << " longer with quick-pg in this run.\n";
    } else {
      out << ": about the same.\n";
    }
    out << "The longest wait of a quiet job was " << human_ms(*quick.quiet_percentile_ms(1.0)) << " with quick-pg and "
        << human_ms(*fifo.quiet_percentile_ms(1.0))
        << " with the FIFO queue, which starts jobs in arrival order: a quiet job waits for every noisy job queued "
           "before it.\n";
  }
  if (quick.noisy_drained_s && fifo.noisy_drained_s) {
    const double change = (*quick.noisy_drained_s - *fifo.noisy_drained_s) / *fifo.noisy_drained_s;
    out << "The noisy backlog of " << quick.backlog << " jobs drained in " << human_ms(*quick.noisy_drained_s * 1000)
        << " with quick-pg and in " << human_ms(*fifo.noisy_drained_s * 1000) << " with the FIFO queue";
    if (std::fabs(change) < 0.05) {
      out << ": fairness to quiet tenants cost the noisy ones about nothing.\n";
    } else if (change > 0) {
      out << ": quick-pg took " << fixed(change * 100, 0) << "% longer.\n";
    } else {
      out << ": quick-pg was " << fixed(-change * 100, 0) << "% faster.\n";
    }
  }
  if (quick.drained && fifo.drained) {
    out << "Both queues ran every job: " << quick.jobs_done << " with quick-pg, " << fifo.jobs_done
        << " with the FIFO queue.\n";
  } else {
    for (const auto* run : {&quick, &fifo}) {
      if (!run->drained) out << run->system << " had not run every job when the demo gave up waiting.\n";
    }
  }
  wrapped_out << wrap(out.str(), kWidth);
}

}  // namespace quick::cli
