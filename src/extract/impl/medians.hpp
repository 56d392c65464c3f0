// numpy.median of many lists at once on the backend (BAD2DFIT's relative rule,
// frame_outputs.hpp): a selection per list on a host backend; on a GPU a team per list that
// ranks every value against the others in its scratch memory.
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

enum class MedianMethod { selection, ranks };

/// A team per list: the list into scratch memory, then each value's place in a stable sort
/// (the values below it, and those equal to it before it), so that exactly one value holds
/// each place; the middle places give the median, as numpy.median takes them (the mean of the
/// two middle values of an even count, NaN when any value is NaN). O(n^2) comparisons per
/// list, from scratch memory, read by the whole warp at once: no sort, no atomics, the same
/// bits on every run.
template <class ExecSpace>
struct RankMedians {
  using mem = typename ExecSpace::memory_space;
  using Policy = Kokkos::TeamPolicy<ExecSpace>;
  using Member = typename Policy::member_type;
  using Scratch = Kokkos::View<double*, typename ExecSpace::scratch_memory_space,
                               Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  StridedLists<mem> lists;
  Kokkos::View<double*, mem> out;
  int level;  // scratch level: 0 (on-chip) when the list fits it

  static std::size_t scratch_bytes(int n) { return Scratch::shmem_size(n + 2); }

  KOKKOS_INLINE_FUNCTION void operator()(Member const& t) const {
    int const l = t.league_rank(), n = lists.n;
    Scratch v(t.team_scratch(level), n + 2);  // the list, then the two middle values
    Kokkos::parallel_for(Kokkos::TeamThreadRange(t, n), [&](int i) { v(i) = lists(l, i); });
    t.team_barrier();
    int nan = 0;
    Kokkos::parallel_reduce(
        Kokkos::TeamThreadRange(t, n), [&](int i, int& c) { c += v(i) != v(i) ? 1 : 0; }, nan);
    if (nan > 0) {
      Kokkos::single(Kokkos::PerTeam(t), [&]() { out(l) = compat::quiet_nan(); });
      return;
    }
    int const hi = n / 2, lo = n % 2 ? hi : hi - 1;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(t, n), [&](int i) {
      double const x = v(i);
      int place = 0;
      for (int j = 0; j < n; ++j) {
        double const y = v(j);
        place += (y < x || (y == x && j < i)) ? 1 : 0;
      }
      if (place == lo) v(n) = x;
      if (place == hi) v(n + 1) = x;
    });
    t.team_barrier();
    Kokkos::single(Kokkos::PerTeam(t),
                   [&]() { out(l) = n % 2 ? v(n + 1) : (v(n) + v(n + 1)) / 2; });
  }
};

/// out(l) = numpy.median of list l (n >= 1). `method`: ranks (the GPU's) or selection
/// (numpy_median on a host thread per list, a host backend's); both give the same bits.
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
  using R = RankMedians<ExecSpace>;
  std::size_t const bytes = R::scratch_bytes(lists.n);
  int const level = bytes <= 32 * 1024 ? 0 : 1;
  auto policy = typename R::Policy(space, lists.nlist, Kokkos::AUTO);
  Kokkos::parallel_for("kspecter::extract::medians",
                       policy.set_scratch_size(level, Kokkos::PerTeam(bytes)),
                       R{lists, out, level});
}

/// The method a backend takes: selection on the host, ranks on a GPU.
template <class ExecSpace>
constexpr MedianMethod median_method() {
  return Tuning<ExecSpace>::host_loops ? MedianMethod::selection : MedianMethod::ranks;
}

}  // namespace kspecter::extract::detail
