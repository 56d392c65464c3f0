// Profiling regions and fenced stage timers. Every pipeline stage opens a ScopedRegion so
// that nsys and Kokkos Tools show it; a StageTimer that records fences before it reads the clock.
#pragma once

#include <Kokkos_Core.hpp>

#include <chrono>
#include <map>
#include <string>
#include <vector>

namespace kspecter {

/// Pushes a named Kokkos profiling region for the lifetime of the object.
class ScopedRegion {
 public:
  explicit ScopedRegion(std::string const& name) { Kokkos::Profiling::pushRegion(name); }
  ~ScopedRegion() { Kokkos::Profiling::popRegion(); }
  ScopedRegion(ScopedRegion const&) = delete;
  ScopedRegion& operator=(ScopedRegion const&) = delete;
};

/// Accumulated wall time per stage, measured between fences.
class StageTimes {
 public:
  /// Adds `seconds` to `stage` (stages keep the order in which they first appear).
  void add(std::string const& stage, double seconds) {
    auto it = index_.find(stage);
    if (it == index_.end()) {
      index_.emplace(stage, entries_.size());
      entries_.push_back({stage, seconds});
    } else {
      entries_[it->second].seconds += seconds;
    }
  }
  struct Entry {
    std::string stage;
    double seconds;
  };
  std::vector<Entry> const& entries() const { return entries_; }
  double total() const {
    double t = 0;
    for (auto const& e : entries_) t += e.seconds;
    return t;
  }

 private:
  std::map<std::string, std::size_t> index_;
  std::vector<Entry> entries_;
};

/// A profiling region that also times itself into `times`: it then fences the execution
/// space on entry and on exit, so the time covers exactly the device work launched inside.
/// With no `times` it is only the region and fences nothing: the host goes on queueing the
/// next stage's kernels while the device runs this one's (each fence left the GPU idle while
/// the host launched the next stage, dozens of times a frame; docs/algorithm.md).
template <class ExecSpace>
class StageTimer {
 public:
  StageTimer(ExecSpace const& space, std::string const& name, StageTimes* times)
      : space_(space), name_(name), times_(times) {
    if (times_) space_.fence();
    Kokkos::Profiling::pushRegion(name_);
    start_ = std::chrono::steady_clock::now();
  }
  ~StageTimer() {
    if (times_) space_.fence();
    auto const t = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    Kokkos::Profiling::popRegion();
    if (times_) times_->add(name_, t);
  }
  StageTimer(StageTimer const&) = delete;
  StageTimer& operator=(StageTimer const&) = delete;

 private:
  ExecSpace space_;
  std::string name_;
  StageTimes* times_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace kspecter
