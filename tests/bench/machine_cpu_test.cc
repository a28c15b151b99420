// The benchmark harness's CPU accounting (bench/support/machine_cpu.h): the numbers behind
// "CPU busy" and "CPU us per item" in the steady-state results.
#include "support/machine_cpu.h"

#include <gtest/gtest.h>

#include <chrono>

namespace quick::bench {
namespace {

TEST(MachineCpuTest, ParsesTheAggregateLineCountingIdleAndIowaitAsNotBusy) {
  // user nice system idle iowait irq softirq steal guest guest_nice
  const auto ticks = parse_proc_stat_cpu_line("cpu  100 5 50 1000 20 3 2 1 40 0");
  ASSERT_TRUE(ticks.has_value());
  EXPECT_EQ(ticks->total, 100u + 5 + 50 + 1000 + 20 + 3 + 2 + 1);  // guest is already in user
  EXPECT_EQ(ticks->busy, 100u + 5 + 50 + 3 + 2 + 1);
}

TEST(MachineCpuTest, AcceptsOldKernelsWithFewerFields) {
  const auto ticks = parse_proc_stat_cpu_line("cpu 10 0 10 80");
  ASSERT_TRUE(ticks.has_value());
  EXPECT_EQ(ticks->total, 100u);
  EXPECT_EQ(ticks->busy, 20u);
}

TEST(MachineCpuTest, RejectsPerCoreAndMalformedLines) {
  EXPECT_FALSE(parse_proc_stat_cpu_line("cpu0 1 2 3 4 5 6 7 8").has_value());
  EXPECT_FALSE(parse_proc_stat_cpu_line("intr 12345").has_value());
  EXPECT_FALSE(parse_proc_stat_cpu_line("cpu 1 2").has_value());
  EXPECT_FALSE(parse_proc_stat_cpu_line("").has_value());
}

TEST(MachineCpuTest, UseBetweenTwoReadingsIsTheBusyShareOfTheInterval) {
  const CpuTicks before{1000, 4000};
  const CpuTicks after{1150, 4200};  // 150 of 200 ticks busy
  const auto use = cpu_use_between(before, after);
  EXPECT_DOUBLE_EQ(use.busy_fraction, 0.75);
  EXPECT_GT(use.busy_core_seconds, 0.0);
  // Counters that did not advance (or went backwards) give no figure rather than a wrong one.
  EXPECT_EQ(cpu_use_between(after, before).busy_fraction, 0.0);
  EXPECT_EQ(cpu_use_between(after, after).busy_core_seconds, 0.0);
}

TEST(MachineCpuTest, ThisMachineReportsBusyTimeWhileItWorks) {
  ASSERT_TRUE(read_machine_cpu().has_value()) << "quick-pg builds and benchmarks on Linux, which has /proc/stat";
  CpuMeter meter;
  volatile unsigned long long sink = 0;
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(200);
  while (std::chrono::steady_clock::now() < until) sink = sink + 1;
  const auto use = meter.finish();
  EXPECT_GT(use.busy_core_seconds, 0.0);
  EXPECT_GT(use.busy_fraction, 0.0);
  EXPECT_LE(use.busy_fraction, 1.0);
  // This process did the spinning: its own share is most of the 200 ms, and cannot exceed what
  // the whole machine spent (ticks are 10 ms, so allow one tick on each reading).
  EXPECT_GT(use.own_core_seconds, 0.1);
  EXPECT_LE(use.own_core_seconds, use.busy_core_seconds + 0.02);
}

}  // namespace
}  // namespace quick::bench
