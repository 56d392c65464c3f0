// Launch shapes of the extraction kernels (the solves have theirs in solve/impl/tuning.hpp).
// The numbers that a GPU profile should tune live here only.
#pragma once

#include <Kokkos_Core.hpp>

namespace kspecter::extract::detail {

/// Host backends (an execution space that runs on the CPU): one thread per team and no
/// vector lanes; the kernels then loop over contiguous pixels, which the compiler vectorises.
template <class ExecSpace,
          bool OnHost = Kokkos::SpaceAccessibility<ExecSpace, Kokkos::HostSpace>::accessible>
struct Tuning {
  /// The kernels take their host code paths (plain loops instead of vector-lane reductions).
  static constexpr bool host_loops = true;
  static constexpr int team = 1;    // threads per team
  static constexpr int vector = 1;  // vector lanes per thread
  /// Vector lanes per thread of assemble_icov (a pair's overlap, pixels spread over lanes).
  static constexpr int assembly_vector = 1;
  static constexpr int assembly_team = 1;   // threads per team of assemble_icov
  static constexpr int assembly_pairs = 1;  // its sums buffered a thread (GPU only)
  /// Threads per patch of band_from_spots (a thread per spot on a GPU).
  static constexpr int band_team = 1;
  /// Bundles per batch at most (0: as many as the memory budget holds), unless
  /// ExtractOptions::bundles_per_batch says otherwise. One on the host: a
  /// bundle's buffers (~250 MB) are reused, touched, by the next bundle, where a batch of
  /// many bundles first-touches all of them (perf/cpu_profile.md).
  static constexpr int bundles_per_batch = 1;
};

/// GPU backends: lanes along the pixel columns of a spot (coalesced) and several threads per
/// team.
template <class ExecSpace>
struct Tuning<ExecSpace, false> {
  static constexpr bool host_loops = false;
  static constexpr int team = 8;
  static constexpr int vector = 16;
  /// assemble_icov: 16 threads a team, a row (spot a) a thread; its 8 lanes share spot a's
  /// pixels (the weighted copy and y, fluxweight, their shares summed 2 at a time), then take
  /// a pair each. A pair over the lanes' pixels paid each pair's set-up on every lane; a lane
  /// a pair issues about half the warp instructions, and 8 lanes beat 4 and 16
  /// (perf/gpu_runs.md, sessions 13 and 19).
  static constexpr int assembly_vector = 8;
  static constexpr int assembly_team = 16;
  static constexpr int assembly_pairs = 2;
  static constexpr int band_team = 64;
  static constexpr int bundles_per_batch = 0;  // a batch as large as the budget: more blocks
};

}  // namespace kspecter::extract::detail
