// Per-kernel times for the benchmarks, through the Kokkos Tools callbacks (no tool library
// needed): the callbacks fence the whole device before each kernel's begin and end (Kokkos
// 3.4 fences only for tools that declare they need it), so the time between them is the
// kernel's own (launch included), on a GPU as on the host. Also records the process CPU time (all
// threads) per kernel, the honest figure on a shared host, and deep copies (fenced here). Adds one
// fence per kernel: use it for the breakdown, and the plain run for the total.
#pragma once

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include <time.h>

namespace kspecter::bench {

class KernelTimer {
 public:
  /// Starts recording (installs the callbacks). Only one KernelTimer may record at a time.
  void start() {
    self() = this;
    namespace KT = Kokkos::Tools::Experimental;
    KT::set_begin_parallel_for_callback(&begin_kernel);
    KT::set_begin_parallel_reduce_callback(&begin_kernel);
    KT::set_begin_parallel_scan_callback(&begin_kernel);
    KT::set_end_parallel_for_callback(&end_kernel);
    KT::set_end_parallel_reduce_callback(&end_kernel);
    KT::set_end_parallel_scan_callback(&end_kernel);
    KT::set_begin_deep_copy_callback(&begin_copy);
    KT::set_end_deep_copy_callback(&end_copy);
  }
  /// Stops recording (removes the callbacks).
  void stop() {
    namespace KT = Kokkos::Tools::Experimental;
    KT::set_begin_parallel_for_callback(nullptr);
    KT::set_begin_parallel_reduce_callback(nullptr);
    KT::set_begin_parallel_scan_callback(nullptr);
    KT::set_end_parallel_for_callback(nullptr);
    KT::set_end_parallel_reduce_callback(nullptr);
    KT::set_end_parallel_scan_callback(nullptr);
    KT::set_begin_deep_copy_callback(nullptr);
    KT::set_end_deep_copy_callback(nullptr);
    self() = nullptr;
  }

  struct Row {
    std::string name;
    long calls = 0;
    double wall = 0, cpu = 0, bytes = 0;
  };
  std::vector<Row> rows() const {
    std::vector<Row> r;
    for (auto const& [k, v] : rows_) r.push_back(v);
    std::sort(r.begin(), r.end(), [](Row const& a, Row const& b) { return a.wall > b.wall; });
    return r;
  }

  /// Prints the kernels by time, per `runs` runs; cpu is the process CPU time / `threads`.
  void print(int runs, int threads) const {
    double total = 0;
    for (auto const& r : rows()) total += r.wall;
    std::printf("\n%-52s %7s %10s %10s %6s\n", "kernel (per run, fenced one by one)", "calls",
                "wall [s]", "cpu/thr [s]", "share");
    for (auto const& r : rows())
      std::printf("%-52s %7.1f %10.5f %10.5f %5.1f%%\n", r.name.c_str(), double(r.calls) / runs,
                  r.wall / runs, r.cpu / runs / threads, 100 * r.wall / total);
    std::printf("%-52s %7s %10.5f\n", "sum", "", total / runs);
  }

 private:
  static KernelTimer*& self() {
    static KernelTimer* p = nullptr;
    return p;
  }
  static double wall_now() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
  static double cpu_now() {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
  }
  static void begin_kernel(char const* name, std::uint32_t, std::uint64_t* id) {
    KernelTimer* t = self();
    if (!t) return;
    Kokkos::fence();
    t->open_.push_back({name, wall_now(), cpu_now(), 0});
    *id = t->open_.size() - 1;
  }
  static void end_kernel(std::uint64_t) {
    KernelTimer* t = self();
    if (!t || t->open_.empty()) return;
    Kokkos::fence();
    t->close(t->open_.back());
    t->open_.pop_back();
  }
  using Handle = Kokkos::Tools::SpaceHandle;
  // A row per destination label: which copies take the time (an unlabelled View's is empty).
  static void begin_copy(Handle dst, char const* dst_label, void const*, Handle src, char const*,
                         void const*, std::uint64_t size) {
    KernelTimer* t = self();
    if (!t) return;
    Kokkos::fence();
    std::string name = std::string("deep_copy ") + src.name + " -> " + dst.name;
    if (dst_label && *dst_label) name += std::string(" [") + dst_label + "]";
    t->open_.push_back({name, wall_now(), cpu_now(), double(size)});
  }
  static void end_copy() { end_kernel(0); }

  struct Open {
    std::string name;
    double wall0, cpu0, bytes;
  };
  void close(Open const& o) {
    Row& r = rows_[o.name];
    r.name = o.name;
    ++r.calls;
    r.wall += wall_now() - o.wall0;
    r.cpu += cpu_now() - o.cpu0;
    r.bytes += o.bytes;
  }
  std::vector<Open> open_;
  std::map<std::string, Row> rows_;
};

}  // namespace kspecter::bench
