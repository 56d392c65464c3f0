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

/// Faults in the pages of [data, data + bytes) on a thread of its own while the caller fills
/// them from the start, so that the kernel's zeroing of fresh pages (on a full-frame inflation,
/// as much CPU time as the inflation: perf record in perf/cpu_profile.md) runs beside the
/// filling instead of inside it. The contents are never touched (MADV_POPULATE_WRITE, Linux
/// 5.14): a page the caller reached first is found present. Does nothing for less than 16 MiB
/// or where the kernel lacks it. The thread stops when this is destroyed.
class PagesFaultedAhead {
 public:
  PagesFaultedAhead(void* data, std::size_t bytes);
  ~PagesFaultedAhead();
  PagesFaultedAhead(PagesFaultedAhead const&) = delete;
  PagesFaultedAhead& operator=(PagesFaultedAhead const&) = delete;

 private:
  struct Thread;
  Thread* thread_ = nullptr;
};

/// Empties `v` and makes room for n elements, untouched, with the huge-page hint.
template <class T>
void reserve_huge(std::vector<T>& v, std::size_t n) {
  v.clear();
  v.reserve(n);
  detail::advise_huge_pages(v.data(), v.capacity() * sizeof(T));
}

}  // namespace kspecter
