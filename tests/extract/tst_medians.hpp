// numpy.median of many lists on TEST_EXECSPACE (src/extract/impl/medians.hpp), both methods
// (a selection per list, a GPU's bitonic sort in team scratch) against the host's numpy_median and
// a sort: odd and even counts, ties, signed zeros, a NaN, strided lists, lists longer than the
// on-chip scratch holds.
#include "extract/impl/medians.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

namespace {

using MedMem = TEST_EXECSPACE::memory_space;
namespace xd = kspecter::extract::detail;

// A sort's median, as numpy.median defines it (the host's reference, written apart).
double sorted_median(std::vector<double> v) {
  for (double x : v)
    if (std::isnan(x)) return x;
  std::sort(v.begin(), v.end());
  std::size_t const n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// The medians of the rows (list_stride = n) or columns of a [rows][cols] array, by `method`.
std::vector<double> on_backend(std::vector<double> const& a, int rows, int cols, bool by_row,
                               xd::MedianMethod method) {
  TEST_EXECSPACE space;
  Kokkos::View<double*, MedMem> d("kspecter::test::lists", a.size());
  Kokkos::deep_copy(
      d, Kokkos::View<double const*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(
             a.data(), a.size()));
  int const nlist = by_row ? rows : cols, n = by_row ? cols : rows;
  Kokkos::View<double*, MedMem> out("kspecter::test::medians", std::size_t(nlist));
  xd::StridedLists<MedMem> const lists{d, nlist, n, by_row ? long(cols) : 1L,
                                       by_row ? 1L : long(cols)};
  xd::medians(space, lists, out, method);
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), out);
  return std::vector<double>(h.data(), h.data() + nlist);
}

void expect_medians(std::vector<double> const& a, int rows, int cols, char const* what) {
  for (bool by_row : {true, false})
    for (auto method : {xd::MedianMethod::selection, xd::MedianMethod::sort}) {
      std::vector<double> const got = on_backend(a, rows, cols, by_row, method);
      int const nlist = by_row ? rows : cols, n = by_row ? cols : rows;
      for (int l = 0; l < nlist; ++l) {
        std::vector<double> v;
        for (int i = 0; i < n; ++i)
          v.push_back(a[by_row ? std::size_t(l) * cols + i : std::size_t(i) * cols + l]);
        double const want = sorted_median(v);
        std::vector<double> w = v;
        double const host = xd::numpy_median(w);
        double const g = got[std::size_t(l)];
        bool const sorted = method == xd::MedianMethod::sort;
        if (std::isnan(want)) {
          EXPECT_TRUE(std::isnan(g)) << what << ", list " << l;
          continue;
        }
        // Bits: the same doubles as the host's selection (a zero's sign aside: -0 == 0).
        EXPECT_EQ(g, want) << what << (by_row ? ", row " : ", column ") << l
                           << (sorted ? ", sort" : ", selection");
        EXPECT_EQ(g, host) << what << ", list " << l;
      }
    }
}

TEST(TEST_CATEGORY, medians_of_many_lists_are_numpy_s_by_selection_and_by_sort) {
  std::mt19937_64 rng(3);
  std::normal_distribution<double> normal;
  for (auto [rows, cols] : {std::pair{7, 9}, std::pair{8, 10}, std::pair{1, 5}, std::pair{4, 1}}) {
    std::vector<double> a(std::size_t(rows) * cols);
    for (double& x : a) x = normal(rng);
    expect_medians(a, rows, cols, "normal");
    // Ties and signed zeros: few distinct values.
    for (double& x : a) x = std::round(normal(rng)) * 0.5;
    for (std::size_t i = 0; i < a.size(); i += 3) a[i] = (i % 2 ? -0.0 : 0.0);
    expect_medians(a, rows, cols, "ties");
  }
  // A NaN makes its lists' medians NaN, as numpy's.
  std::vector<double> a(6 * 5, 1.5);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = double(i % 7);
  a[13] = std::numeric_limits<double>::quiet_NaN();
  expect_medians(a, 6, 5, "nan");
}

TEST(TEST_CATEGORY, medians_of_lists_longer_than_on_chip_scratch_are_numpy_s) {
  // 6000 values a list, sorted as 8192: 64 KB, past what a team keeps on chip (scratch
  // level 1 then).
  int const rows = 3, cols = 6000;
  std::mt19937_64 rng(4);
  std::exponential_distribution<double> chi2(1.0);
  std::vector<double> a(std::size_t(rows) * cols);
  for (double& x : a) x = chi2(rng);
  std::vector<double> const got = on_backend(a, rows, cols, true, xd::MedianMethod::sort);
  for (int l = 0; l < rows; ++l) {
    std::vector<double> v(a.begin() + long(l) * cols, a.begin() + long(l + 1) * cols);
    EXPECT_EQ(got[std::size_t(l)], sorted_median(v)) << l;
  }
}

}  // namespace
