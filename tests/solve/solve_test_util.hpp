// Moving test matrices between host vectors and batched device Views.
#pragma once

#include <Kokkos_Core.hpp>
#include <kspecter/solve/batched.hpp>
#include <vector>

namespace kspecter::test::solve_util {

template <class Space>
kspecter::solve::MatrixBatch<typename Space::memory_space> upload(
    std::vector<std::vector<double>> const& mats, int n) {
  kspecter::solve::MatrixBatch<typename Space::memory_space> v("mats", mats.size(), n, n);
  auto h = Kokkos::create_mirror_view(v);
  for (std::size_t b = 0; b < mats.size(); ++b)
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) h(b, i, j) = mats[b][std::size_t(i) * n + j];
  Kokkos::deep_copy(v, h);
  return v;
}

template <class V>
std::vector<double> matrix(V const& host, std::size_t b) {
  int const n = int(host.extent(1)), m = int(host.extent(2));
  std::vector<double> out(std::size_t(n) * m);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < m; ++j) out[std::size_t(i) * m + j] = host(b, i, j);
  return out;
}

}  // namespace kspecter::test::solve_util
