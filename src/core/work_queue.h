// The local buffer between Managers and Workers, fair across tenants: Workers take items round
// robin over the zones that have items buffered, so a zone whose visit yielded many items does
// not delay the single item of the next zone ("water filling", paper section 6, locally).
//
// Fair by processing time too (docs/consumer.md#how-items-flow, "Long jobs beside short ones"):
// zones whose items take kLongerBy times as long as those of the shortest zone active in the
// last kShareWindow (and at least kLongAtLeastMicros) hold at most all Workers but one between
// them, so that the short zone's next item finds a Worker free instead of waiting for a long
// item to end. A zone alone, or among zones of similar lengths, uses them all.
//
// It also keeps the per-job-type count of items held (buffered or running), which the Managers
// use for the per-consumer throttle (JobTypeConfig::max_in_flight).
//
// Thread safety: all methods may be called from any thread (one mutex).
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <list>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/held_item.h"

namespace quick::core {

class WorkQueue {
 public:
  // A zone counts as long beside another when its measured mean processing time (pop to
  // finished(), a moving average) is at least this many times the other's.
  static constexpr double kLongerBy = 4.0;
  // ... and at least this long: shorter items free their Workers soon enough.
  static constexpr double kLongAtLeastMicros = 1000;
  // How recently another zone must have had an item pushed, run or finished (or have one buffered
  // or running now) to be kept a Worker.
  static constexpr std::chrono::milliseconds kShareWindow{1000};
  // How often the zones are classified long or not (less often with many zones: every 10 us per
  // zone known). A zone's new measurement or first item counts from the next classification.
  static constexpr std::chrono::milliseconds kClassifyEvery{10};

  // The number of Workers taking items, for the shares by processing time; below 2 (the default,
  // 0) turns them off.
  void set_workers(int workers);

  // Adds items (and counts them as held by their job type).
  void push(std::vector<core::HeldItemPtr> items);

  // Adds the items whose job type is under its limit (limit_of(job_type) items held at most;
  // 0 = no limit), deciding and counting under one lock so that concurrent Managers cannot both
  // take the last slot. Returns the items refused.
  std::vector<core::HeldItemPtr> push_within_limits(std::vector<core::HeldItemPtr> items,
                                                    const std::function<int(const std::string&)>& limit_of);

  // The next item, fairly; waits up to `timeout`. Returns nullptr on timeout or once closed and
  // empty. An item of a zone held back by the shares by processing time waits for a Worker to
  // finish (or for the zone it makes way for to go idle); once closed, none is held back.
  core::HeldItemPtr pop(std::chrono::milliseconds timeout);

  // A Worker is done with an item (acknowledged or released): it no longer counts as held.
  void finished(const core::HeldItemPtr& item);

  // Takes every buffered item out (to release them on stop). They still count as held until
  // finished() is called for each.
  std::vector<core::HeldItemPtr> drain();

  // Wakes waiting Workers; pop() returns nullptr once the queue is empty.
  void close();

  bool closed() const;
  std::size_t buffered() const;
  // Zones (of any database) with items waiting.
  std::size_t buffered_zones() const;
  // Tenants of `database` with at least `items` items waiting.
  std::vector<std::string> zones_with_at_least(int database, std::size_t items) const;
  std::size_t held() const;
  int held_of_type(const std::string& job_type) const;
  // Items held per job type (types with none are left out).
  std::map<std::string, int> held_by_type() const;

  // Waits until fewer than `limit` items are buffered, up to `timeout`. Returns whether there is
  // room.
  bool wait_for_room(std::size_t limit, std::chrono::milliseconds timeout);

 private:
  using ZoneKey = std::pair<int, std::string>;  // (database, tenant)

  // What the shares by processing time know of a zone (guarded by mutex_).
  struct ZoneShare {
    int running = 0;           // items popped and not finished
    double mean_micros = 0;    // moving average of pop -> finished()
    bool measured = false;     // mean_micros holds at least one measurement
    SteadyTime last_active{};  // last push, pop or finish of one of its items
  };

  void add_locked(core::HeldItemPtr item);  // requires mutex_
  // Classifies the zones into long_zones_ when due. Requires mutex_.
  void classify_locked(SteadyTime now);
  // Whether zone `key` must leave the last free Worker to other zones now: it is long, and the
  // long zones together run on all Workers but one. Requires mutex_.
  bool held_back_locked(const ZoneKey& key) const;
  // Forgets zones idle for 10 windows, at most once a window. Requires mutex_.
  void forget_idle_zones_locked(SteadyTime now);

  mutable std::mutex mutex_;
  std::condition_variable item_available_;
  std::condition_variable room_available_;
  std::map<ZoneKey, std::deque<core::HeldItemPtr>> by_zone_;  // guarded by mutex_
  std::list<ZoneKey> turn_order_;                             // zones with items, next first
  std::map<std::string, int> held_by_type_;                   // guarded by mutex_
  std::size_t buffered_ = 0;                                  // guarded by mutex_
  std::size_t held_ = 0;                                      // guarded by mutex_
  bool closed_ = false;                                       // guarded by mutex_
  std::map<ZoneKey, ZoneShare> shares_;                       // guarded by mutex_
  int workers_ = 0;                                           // guarded by mutex_
  SteadyTime last_forget_{};                                  // guarded by mutex_
  std::vector<ZoneKey> long_zones_;                           // guarded by mutex_
  SteadyTime last_classified_{};                              // guarded by mutex_
  bool classify_due_ = true;  // not classified since the Workers were set; guarded by mutex_
  int waiting_on_hold_ = 0;   // pops waiting while every buffered zone is held back; guarded by mutex_
};

}  // namespace quick::core
