#include <kspecter/core/huge_pages.hpp>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <thread>

#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

namespace kspecter {

struct PagesFaultedAhead::Thread {
  std::atomic<bool> stop{false};
  std::thread thread;
};

PagesFaultedAhead::PagesFaultedAhead(void* data, std::size_t bytes) {
#if defined(__linux__) && defined(MADV_POPULATE_WRITE)
  constexpr std::size_t least = std::size_t(16) << 20;
  long const page = sysconf(_SC_PAGESIZE);
  if (data == nullptr || bytes < least || page <= 0) return;
  auto const p = static_cast<std::uintptr_t>(page);
  std::uintptr_t const first = (reinterpret_cast<std::uintptr_t>(data) + p - 1) / p * p;
  std::uintptr_t const last = (reinterpret_cast<std::uintptr_t>(data) + bytes) / p * p;
  if (last <= first) return;
  thread_ = new Thread;
  Thread* const t = thread_;
  t->thread = std::thread([t, first, last] {
    // A few MiB at a time, so that a stop is seen soon and the filler is rarely overtaken
    // inside one call.
    constexpr std::uintptr_t step = std::uintptr_t(4) << 20;
    for (std::uintptr_t at = first; at < last && !t->stop.load(std::memory_order_relaxed);
         at += step) {
      std::size_t const n = static_cast<std::size_t>(std::min(step, last - at));
      if (madvise(reinterpret_cast<void*>(at), n, MADV_POPULATE_WRITE) != 0) return;
    }
  });
#else
  (void)data;
  (void)bytes;
#endif
}

PagesFaultedAhead::~PagesFaultedAhead() {
  if (!thread_) return;
  thread_->stop = true;
  thread_->thread.join();
  delete thread_;
}

}  // namespace kspecter
