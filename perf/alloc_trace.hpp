// Where a frame's View allocations and frees go, through the Kokkos Tools callbacks (no tool
// library needed): every allocation and free of device memory with its size, label, the
// profiling region it fell in, and the wall time since the event before it. Kokkos calls the
// allocate callback after the allocation (cudaMalloc) and the deallocate callback before the
// free (cudaFree), so within a run of back-to-back events that gap is one event's cost: the
// header copy and the next cudaMalloc, or the last free and the next record's header copy.
// Recording adds a small host cost per event (and Kokkos 3.4 then reads a device View's header
// back before freeing it): use it for the counts and the shape of the costs, and the plain run
// for the total.
#pragma once

#include <Kokkos_Core.hpp>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

namespace kspecter::bench {

class AllocTrace {
 public:
  /// Starts recording (installs the callbacks). Only one AllocTrace may record at a time.
  void start() {
    self() = this;
    t0_ = last_ = now();
    namespace KT = Kokkos::Tools::Experimental;
    KT::set_allocate_data_callback(&on_alloc);
    KT::set_deallocate_data_callback(&on_free);
    KT::set_push_region_callback(&on_push);
    KT::set_pop_region_callback(&on_pop);
  }
  /// Stops recording (removes the callbacks).
  void stop() {
    namespace KT = Kokkos::Tools::Experimental;
    KT::set_allocate_data_callback(nullptr);
    KT::set_deallocate_data_callback(nullptr);
    KT::set_push_region_callback(nullptr);
    KT::set_pop_region_callback(nullptr);
    self() = nullptr;
  }

  /// Prints each device event (host memory left out unless `host`), then per region the
  /// counts, bytes and summed gaps.
  void print(bool host) const {
    struct Sum {
      int n = 0;
      double bytes = 0, gap = 0;
    };
    std::map<std::string, Sum> sums;
    std::printf("\n%9s %8s %1s %12s  %-28s %s\n", "t [ms]", "gap [ms]", "", "bytes", "region",
                "label");
    for (Event const& e : events_) {
      if (!host && e.host) continue;
      std::printf("%9.3f %8.3f %1s %12llu  %-28s %s\n", 1e3 * e.t, 1e3 * e.gap, e.alloc ? "+" : "-",
                  static_cast<unsigned long long>(e.bytes), e.region.c_str(), e.label.c_str());
      Sum& s = sums[e.region + (e.alloc ? " +" : " -")];
      ++s.n;
      s.bytes += double(e.bytes);
      s.gap += e.gap;
    }
    std::printf("\n%-34s %6s %12s %12s\n", "region (+ allocations, - frees)", "count", "MiB",
                "gaps [ms]");
    for (auto const& [k, s] : sums)
      std::printf("%-34s %6d %12.1f %12.3f\n", k.c_str(), s.n, s.bytes / (1 << 20), 1e3 * s.gap);
  }

 private:
  struct Event {
    bool alloc, host;
    std::uint64_t bytes;
    std::string label, region;
    double t, gap;
  };
  static AllocTrace*& self() {
    static AllocTrace* p = nullptr;
    return p;
  }
  static double now() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
  void record(bool alloc, Kokkos::Tools::SpaceHandle h, char const* label, std::uint64_t size) {
    double const t = now();
    bool const host = std::string(h.name) == "Host";
    events_.push_back({alloc, host, size, label ? label : "",
                       regions_.empty() ? "" : regions_.back(), t - t0_, t - last_});
    last_ = t;
  }
  static void on_alloc(Kokkos::Tools::SpaceHandle h, char const* label, void const*,
                       std::uint64_t size) {
    if (AllocTrace* a = self()) a->record(true, h, label, size);
  }
  static void on_free(Kokkos::Tools::SpaceHandle h, char const* label, void const*,
                      std::uint64_t size) {
    if (AllocTrace* a = self()) a->record(false, h, label, size);
  }
  static void on_push(char const* name) {
    if (AllocTrace* a = self()) a->regions_.emplace_back(name);
  }
  static void on_pop() {
    if (AllocTrace* a = self(); a && !a->regions_.empty()) a->regions_.pop_back();
  }

  double t0_ = 0, last_ = 0;
  std::vector<std::string> regions_;
  std::vector<Event> events_;
};

}  // namespace kspecter::bench
