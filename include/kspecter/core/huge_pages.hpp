// The transparent-huge-page hint for large host buffers that are written whole right after
// they are allocated: their first-touch faults on 4 KiB pages can cost as much as the work that
// fills them (perf/cpu_profile.md), and huge pages fault 512 times less. A hint only: the system's
// THP mode may ignore it, and no result depends on it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace kspecter {

namespace detail {

/// Asks for huge pages over the 2 MiB-aligned interior of [data, data + bytes).
inline void advise_huge_pages(void* data, std::size_t bytes) noexcept {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  constexpr std::size_t huge = std::size_t(2) << 20;
  if (data == nullptr || bytes < 2 * huge) return;
  auto const begin = reinterpret_cast<std::uintptr_t>(data);
  auto const first = (begin + huge - 1) & ~std::uintptr_t(huge - 1);
  auto const last = (begin + bytes) & ~std::uintptr_t(huge - 1);
  if (last > first) madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);
#else
  (void)data;
  (void)bytes;
#endif
}

}  // namespace detail

/// Empties `v` and makes room for n elements, untouched, with the huge-page hint.
template <class T>
void reserve_huge(std::vector<T>& v, std::size_t n) {
  v.clear();
  v.reserve(n);
  detail::advise_huge_pages(v.data(), v.capacity() * sizeof(T));
}

}  // namespace kspecter
