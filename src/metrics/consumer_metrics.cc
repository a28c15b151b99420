#include "metrics/consumer_metrics.h"

#include <cstdint>

namespace quick::metrics {
namespace {

// A consumer-wide value of ConsumerStats.
struct ConsumerValue {
  const char* name;
  MetricType type;
  const char* help;
  std::uint64_t ConsumerStats::*field;
};

// The consumer's own counters and gauges (docs/consumer.md#counters-and-logs explains each).
// Items done, retried, dead and lease lost are per job type below.
const ConsumerValue kConsumerValues[] = {
    {"quick_scans_total", MetricType::kCounter, "Scanner peeks of the top-level queue.", &ConsumerStats::scans},
    {"quick_visits_total", MetricType::kCounter, "Manager visits (one statement over a batch of zones).",
     &ConsumerStats::visits},
    {"quick_pointer_leases_won_total", MetricType::kCounter, "Zones visited (pointer leases won).",
     &ConsumerStats::pointer_leases_won},
    {"quick_pointer_leases_lost_total", MetricType::kCounter,
     "Pointer leases lost to another consumer (locked, no longer vested, or collected).",
     &ConsumerStats::pointer_leases_lost},
    {"quick_pointers_collected_total", MetricType::kCounter, "Pointers of empty zones garbage-collected.",
     &ConsumerStats::pointers_collected},
    {"quick_items_dequeued_total", MetricType::kCounter, "Items leased by Manager visits.",
     &ConsumerStats::items_dequeued},
    {"quick_items_released_total", MetricType::kCounter, "Items given back unprocessed (stop, throttle, no handler).",
     &ConsumerStats::items_released},
    {"quick_items_throttled_total", MetricType::kCounter, "Items released because their type was at max_in_flight.",
     &ConsumerStats::items_throttled},
    {"quick_items_unhandled_total", MetricType::kCounter, "Items met without a handler for their job type.",
     &ConsumerStats::items_unhandled},
    {"quick_handler_exceptions_total", MetricType::kCounter, "Handlers that threw.",
     &ConsumerStats::handler_exceptions},
    {"quick_lease_extensions_total", MetricType::kCounter, "Item leases extended.", &ConsumerStats::lease_extensions},
    {"quick_wakeups_total", MetricType::kCounter, "Wake-up notifications received.", &ConsumerStats::wakeups},
    {"quick_consumer_errors_total", MetricType::kCounter, "Database errors of background loops (all retried).",
     &ConsumerStats::database_errors},
    {"quick_reconnects_total", MetricType::kCounter, "Reconnections after a lost connection.",
     &ConsumerStats::reconnects},
    {"quick_items_buffered", MetricType::kGauge, "Items leased and waiting for a Worker.",
     &ConsumerStats::items_buffered},
    {"quick_items_in_flight", MetricType::kGauge, "Handlers running.", &ConsumerStats::items_running},
    {"quick_live_consumers", MetricType::kGauge, "Consumers sharing this one's tenants, itself included.",
     &ConsumerStats::live_consumers},
};

// An item counter of one job type.
struct JobTypeValue {
  const char* name;
  const char* help;
  std::uint64_t JobTypeStats::*field;
};

const JobTypeValue kJobTypeValues[] = {
    {"quick_items_done_total", "Items completed.", &JobTypeStats::items_done},
    {"quick_items_retried_total", "Items requeued after a failure, with backoff.", &JobTypeStats::items_retried},
    {"quick_items_dead_total", "Items that failed permanently (moved to quick.dead_items or deleted).",
     &JobTypeStats::items_dead},
    {"quick_items_lease_lost_total", "Items whose completion was refused: another consumer held them.",
     &JobTypeStats::items_lease_lost},
};

}  // namespace

void add_consumer_metrics(Exposition& out, const std::string& consumer_id, const ConsumerStats& stats) {
  const Labels consumer{{"consumer", consumer_id}};
  for (const auto& value : kConsumerValues) {
    out.add(value.name, value.type, value.help, consumer, static_cast<double>(stats.*value.field));
  }
  out.add("quick_in_order_role", MetricType::kGauge, "1 while this consumer is the in-order Scanner of a database.",
          consumer, stats.in_order_role ? 1 : 0);
  for (const auto& [job_type, type_stats] : stats.job_types) {
    const Labels labels{{"consumer", consumer_id}, {"job_type", job_type}};
    for (const auto& value : kJobTypeValues) {
      out.add(value.name, MetricType::kCounter, value.help, labels, static_cast<double>(type_stats.*value.field));
    }
    out.add_histogram("quick_handler_duration_seconds", "Handler run time, in-line retries included.", labels,
                      type_stats.handler_duration);
    out.add_histogram("quick_pickup_latency_seconds", "From an item's vesting (or enqueue) to its handler's start.",
                      labels, type_stats.pickup_latency);
  }
  out.add_histogram("quick_pointer_pickup_latency_seconds", "From a pointer's vesting to its zone's visit.", consumer,
                    stats.pointer_pickup_latency);
}

}  // namespace quick::metrics
