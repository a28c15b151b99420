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

}  // namespace quick::bench
