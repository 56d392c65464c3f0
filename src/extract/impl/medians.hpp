// numpy.median of many lists at once on the backend (BAD2DFIT's relative rule,
// frame_outputs.hpp): a selection per list on a host backend; on a GPU a team per list that
// sorts it in its scratch memory.
#pragma once

#include "../median.hpp"
#include "types.hpp"

#include <kspecter/core/kokkos_compat.hpp>

#include <Kokkos_Core.hpp>

#include <vector>

namespace kspecter::extract::detail {

/// Lists of n values in memory: list l's value i at data(l * list_stride + i * item_stride).
template <class Mem>
struct StridedLists {
  Kokkos::View<const double*, Mem> data;
  int nlist = 0, n = 0;
  long list_stride = 0, item_stride = 1;
  KOKKOS_INLINE_FUNCTION double operator()(int l, int i) const {
    return data(l * list_stride + i * item_stride);
  }
};

enum class MedianMethod { selection, sort };

/// A team per list: the list into scratch memory, padded with +inf to a power of two, sorted
/// there by a bitonic network (every step a pass of the team's threads over the pairs, then a
/// barrier), and its middle values taken as numpy.median takes them (the mean of the two
/// middle values of an even count; NaN when any value is NaN). The values are the same as a
/// selection's, whatever order equal values end in; no atomics, the same bits on every run.
template <class ExecSpace>
struct SortMedians {
  using mem = typename ExecSpace::memory_space;
  using Policy = Kokkos::TeamPolicy<ExecSpace>;
  using Member = typename Policy::member_type;
  using Scratch = Kokkos::View<double*, typename ExecSpace::scratch_memory_space,
                               Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  StridedLists<mem> lists;
  Kokkos::View<double*, mem> out;
  int width;  // the power of two >= n that the network sorts
  int level;  // scratch level: 0 (on-chip) when the list fits it

  static int width_for(int n) {
    int w = 1;
    while (w < n) w *= 2;
    return w;
  }
  static std::size_t scratch_bytes(int width) { return Scratch::shmem_size(width); }

  KOKKOS_INLINE_FUNCTION void operator()(Member const& t) const {
    int const l = t.league_rank(), n = lists.n;
    Scratch v(t.team_scratch(level), width);
    Kokkos::parallel_for(Kokkos::TeamThreadRange(t, width),
                         [&](int i) { v(i) = i < n ? lists(l, i) : compat::infinity(); });
    t.team_barrier();
    int nan = 0;
    Kokkos::parallel_reduce(
        Kokkos::TeamThreadRange(t, n), [&](int i, int& c) { c += v(i) != v(i) ? 1 : 0; }, nan);
    if (nan > 0) {
      Kokkos::single(Kokkos::PerTeam(t), [&]() { out(l) = compat::quiet_nan(); });
      return;
    }
    for (int k = 2; k <= width; k *= 2)
      for (int j = k / 2; j > 0; j /= 2) {
        Kokkos::parallel_for(Kokkos::TeamThreadRange(t, width), [&](int i) {
          int const q = i ^ j;
          if (q > i) {
            double const x = v(i), y = v(q);
            if ((i & k) == 0 ? x > y : x < y) {
              v(i) = y;
              v(q) = x;
            }
          }
        });
        t.team_barrier();
      }
    int const hi = n / 2;
    Kokkos::single(Kokkos::PerTeam(t), [&]() { out(l) = n % 2 ? v(hi) : (v(hi - 1) + v(hi)) / 2; });
  }
};

/// out(l) = numpy.median of list l (n >= 1). `method`: sort (the GPU's) or selection
/// (numpy_median on a host thread per list, a host backend's); both give the same values.
template <class ExecSpace>
void medians(ExecSpace const& space, StridedLists<typename ExecSpace::memory_space> const& lists,
             Kokkos::View<double*, typename ExecSpace::memory_space> const& out,
             MedianMethod method) {
  if (lists.nlist <= 0 || lists.n <= 0) return;
  if (method == MedianMethod::selection) {
    if constexpr (Kokkos::SpaceAccessibility<Kokkos::HostSpace,
                                             typename ExecSpace::memory_space>::accessible) {
      Kokkos::parallel_for(
          "kspecter::extract::medians",
          Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<int>>(space, 0, lists.nlist),
          [=](int l) {
            std::vector<double> v(std::size_t(lists.n));
            for (int i = 0; i < lists.n; ++i) v[std::size_t(i)] = lists(l, i);
            out(l) = numpy_median(v);
          });
      return;
    }
  }
  using S = SortMedians<ExecSpace>;
  int const width = S::width_for(lists.n);
  std::size_t const bytes = S::scratch_bytes(width);
  int const level = bytes <= std::size_t(S::Policy::scratch_size_max(0)) ? 0 : 1;
  auto policy = typename S::Policy(space, lists.nlist, Kokkos::AUTO);
  Kokkos::parallel_for("kspecter::extract::medians",
                       policy.set_scratch_size(level, Kokkos::PerTeam(bytes)),
                       S{lists, out, width, level});
}

/// The method a backend takes: selection on the host, ranks on a GPU.
template <class ExecSpace>
constexpr MedianMethod median_method() {
  return Tuning<ExecSpace>::host_loops ? MedianMethod::selection : MedianMethod::sort;
}

}  // namespace kspecter::extract::detail
