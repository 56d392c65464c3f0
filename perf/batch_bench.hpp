// What the benchmarks of batched solves share: their command line (--nmat --nfiber --m --reps
// --threads --device) and their batch of iCov-like matrices (tests/support/icov_like.hpp).
#pragma once

#include <kspecter/core/kokkos_compat.hpp>
#include <kspecter/solve/batched.hpp>

#include <icov_like.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace kspecter::bench {

struct BatchArgs {
  int nmat, nfiber = 7, m = 74, reps;
  compat::InitOptions init;
};

/// Reads `--name value` pairs into `a` (defaults as given); false, with a message naming
/// `program`, on an unknown option.
inline bool parse_batch_args(int argc, char** argv, char const* program, BatchArgs& a) {
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string const k = argv[i];
    int const v = std::atoi(argv[i + 1]);
    int* const slot = k == "--nmat"      ? &a.nmat
                      : k == "--nfiber"  ? &a.nfiber
                      : k == "--m"       ? &a.m
                      : k == "--reps"    ? &a.reps
                      : k == "--threads" ? &a.init.num_threads
                      : k == "--device"  ? &a.init.device_id
                                         : nullptr;
    if (!slot) {
      std::fprintf(stderr, "%s: unknown option %s\n", program, k.c_str());
      return false;
    }
    *slot = v;
  }
  return true;
}

/// nmat iCov-like matrices of n = nfiber * m: eight distinct ones, repeated over the batch.
template <class MemorySpace>
solve::MatrixBatch<MemorySpace> icov_batch(int nmat, int nfiber, int m) {
  int const n = nfiber * m;
  solve::MatrixBatch<MemorySpace> a("kspecter::bench::icov", nmat, n, n);
  auto h = Kokkos::create_mirror_view(a);
  for (int d = 0; d < std::min(nmat, 8); ++d) {
    auto const one = test::icov_like(nfiber, m, 1234u + d);
    for (int b = d; b < nmat; b += 8)
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) h(b, i, j) = one[std::size_t(i) * n + j];
  }
  Kokkos::deep_copy(a, h);
  return a;
}

}  // namespace kspecter::bench
