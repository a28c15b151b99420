// Unit tests (no database) for the Prometheus text builder (src/metrics/exposition.h): families
// grouped whatever the order samples arrive in, label values escaped, histograms cumulative.
#include <gtest/gtest.h>

#include <chrono>
#include <limits>

#include "metrics/exposition.h"
#include "util/latency_histogram.h"

namespace quick::metrics {
namespace {

TEST(Exposition, SamplesOfOneFamilyAreGroupedUnderOneHelpAndTypeLine) {
  Exposition out;
  out.add("quick_a", MetricType::kGauge, "A.", {{"database", "one"}}, 1);
  out.add("quick_b_total", MetricType::kCounter, "B.", {}, 2);
  out.add("quick_a", MetricType::kGauge, "A.", {{"database", "two"}}, 3);
  EXPECT_EQ(out.text(),
            "# HELP quick_a A.\n# TYPE quick_a gauge\nquick_a{database=\"one\"} 1\nquick_a{database=\"two\"} 3\n"
            "# HELP quick_b_total B.\n# TYPE quick_b_total counter\nquick_b_total 2\n");
}

TEST(Exposition, LabelValuesAndValuesAreWrittenAsTheFormatSays) {
  EXPECT_EQ(escape_label_value("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
  EXPECT_EQ(escape_label_value("app42/user7 é"), "app42/user7 é");
  EXPECT_EQ(format_value(0.001), "0.001");
  EXPECT_EQ(format_value(12345678), "12345678");
  EXPECT_EQ(format_value(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(format_value(std::numeric_limits<double>::quiet_NaN()), "NaN");
}

TEST(Exposition, HistogramsHaveCumulativeBucketsSumAndCount) {
  util::LatencyHistogram histogram;
  histogram.record(std::chrono::microseconds(500));       // <= 1 ms
  histogram.record(std::chrono::microseconds(1000));      // exactly 1 ms: in le="0.001"
  histogram.record(std::chrono::microseconds(3000));      // <= 5 ms
  histogram.record(std::chrono::microseconds(90000000));  // above every bound
  Exposition out;
  out.add_histogram("quick_h_seconds", "H.", {{"job_type", "x"}}, histogram.summary());
  const std::string text = out.text();
  EXPECT_NE(text.find("# TYPE quick_h_seconds histogram\n"), std::string::npos);
  EXPECT_NE(text.find("quick_h_seconds_bucket{job_type=\"x\",le=\"0.001\"} 2\n"), std::string::npos) << text;
  EXPECT_NE(text.find("quick_h_seconds_bucket{job_type=\"x\",le=\"0.0025\"} 2\n"), std::string::npos) << text;
  EXPECT_NE(text.find("quick_h_seconds_bucket{job_type=\"x\",le=\"0.005\"} 3\n"), std::string::npos) << text;
  EXPECT_NE(text.find("quick_h_seconds_bucket{job_type=\"x\",le=\"60\"} 3\n"), std::string::npos) << text;
  EXPECT_NE(text.find("quick_h_seconds_bucket{job_type=\"x\",le=\"+Inf\"} 4\n"), std::string::npos) << text;
  EXPECT_NE(text.find("quick_h_seconds_sum{job_type=\"x\"} 90.0045\n"), std::string::npos) << text;
  EXPECT_NE(text.find("quick_h_seconds_count{job_type=\"x\"} 4\n"), std::string::npos) << text;
}

}  // namespace
}  // namespace quick::metrics
