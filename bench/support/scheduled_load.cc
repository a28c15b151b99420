#include "support/scheduled_load.h"

#include <atomic>
#include <cmath>
#include <mutex>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

namespace quick::bench {

using Clock = std::chrono::steady_clock;

std::string due_payload(Clock::time_point due) {
  return nlohmann::json{
      {"due_ns", std::chrono::duration_cast<std::chrono::nanoseconds>(due.time_since_epoch()).count()}}
      .dump();
}

std::optional<std::chrono::microseconds> since_due(const std::string& payload, Clock::time_point now) {
  const auto json = nlohmann::json::parse(payload, nullptr, /*allow_exceptions=*/false);
  if (!json.is_object() || !json.contains("due_ns") || !json["due_ns"].is_number_integer()) return std::nullopt;
  const Clock::time_point due{std::chrono::nanoseconds(json["due_ns"].get<std::int64_t>())};
  return std::chrono::duration_cast<std::chrono::microseconds>(now - due);
}

ScheduleResult run_schedule(int producers, double rate, double seconds,
                            const std::function<std::function<void(Clock::time_point)>(int)>& make_sender) {
  ScheduleResult result;
  // Job i is due at i / rate, for every i with i / rate < seconds.
  const auto scheduled = static_cast<long>(std::ceil(rate * seconds));
  result.scheduled = scheduled;
  std::atomic<long> sent{0};
  std::mutex mutex;
  LatencyRecorder lag;
  std::vector<std::thread> threads;
  const auto start = Clock::now();
  for (int p = 0; p < producers; ++p) {
    threads.emplace_back([&, p] {
      try {
        const auto send = make_sender(p);
        for (long i = p; i < scheduled; i += producers) {
          const auto due = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(i / rate));
          std::this_thread::sleep_until(due);
          lag.record(std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - due));
          try {
            send(due);
            ++sent;
          } catch (const std::exception& error) {
            std::lock_guard<std::mutex> lock(mutex);
            if (result.first_error.empty()) result.first_error = error.what();
          }
        }
      } catch (const std::exception& error) {  // make_sender: this producer sends nothing
        std::lock_guard<std::mutex> lock(mutex);
        if (result.first_error.empty()) result.first_error = error.what();
      }
    });
  }
  for (auto& thread : threads) thread.join();
  result.sent = sent.load();
  result.unsent = scheduled - result.sent;
  result.lag = lag.summary();
  return result;
}

long due_by_tick(double per_second, Clock::duration tick, Clock::duration since_start) {
  if (tick.count() <= 0 || since_start.count() < 0) return 0;
  const auto ticks = since_start / tick;  // whole ticks come by then
  const double seconds = std::chrono::duration<double>(ticks * tick).count();
  // k / per_second <= seconds for k = 1 .. floor(per_second x seconds); the small allowance keeps
  // a job due exactly on a tick from slipping to the next one by a rounding error.
  return static_cast<long>(std::floor(per_second * seconds + 1e-9));
}

void run_ticks(Clock::time_point start, Clock::time_point end, Clock::duration tick,
               const std::function<void(const std::vector<Clock::time_point>&)>& send, LatencyRecorder& lag) {
  auto next = start + tick;
  while (next <= end) {
    std::this_thread::sleep_until(next);
    const auto now = Clock::now();
    std::vector<Clock::time_point> ticks;
    for (; next <= end && next <= now; next += tick) {
      ticks.push_back(next);
      lag.record(std::chrono::duration_cast<std::chrono::microseconds>(now - ticks.back()));
    }
    send(ticks);
  }
}

}  // namespace quick::bench
