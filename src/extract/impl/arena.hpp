// One device allocation that a frame's buffers of known size are cut from (Workspace).
#pragma once

#include <kspecter/core/allocate.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace kspecter::extract::detail {

/// The memory of a frame's buffers whose sizes are known before its first batch, as one
/// allocation on a GPU. Each View allocation costs a cudaMalloc and each free a cudaFree, at a
/// price per call whatever the size (perf/device/alloc_cost.cu): a frame of ~30 Views paid it
/// ~30 times at each end, where one block of the same size pays it once (docs/algorithm.md,
/// "One block a frame"; the numbers in perf/gpu_runs.md). The buffers are unmanaged
/// Views into the block: the Arena owns the memory, and its holder (the Workspace) uses them
/// only while it holds the Arena too.
///
/// Used in two passes over the same cuts: `measure()` adds up the sizes (its Views have no
/// memory), `cut_from()` allocates that much and hands the same Views out of it. `off()` (host
/// backends) allocates every View on its own, as a host's malloc is cheap and a tool that checks
/// bounds (AddressSanitizer) then sees each buffer apart.
template <class Mem>
class Arena {
 public:
  static Arena off() { return Arena(Mode::off); }
  static Arena measure() { return Arena(Mode::measure); }
  /// Runs `cut(arena)` (which takes every View) over a measuring Arena, then over a block of
  /// the bytes it measured, labelled `label`, and returns that block; or, unless `one_block`,
  /// once over an Arena that is off.
  template <class ExecSpace, class Cut>
  static Arena make(ExecSpace const& space, std::string const& label, bool one_block, Cut&& cut) {
    Arena a = off();
    if (one_block) {
      Arena m = measure();
      cut(m);
      a = cut_from(space, label, m.bytes());
    }
    cut(a);
    return a;
  }
  /// A block of `bytes` (the measuring pass's bytes()) in `space`'s memory, labelled `label`;
  /// a failure to get it is a kspecter::OutOfMemory.
  template <class ExecSpace>
  static Arena cut_from(ExecSpace const& space, std::string const& label, std::size_t bytes) {
    Arena a(Mode::cut);
    a.block_ = allocate<Block>(space, label, bytes + kAlign);
    auto const at = reinterpret_cast<std::uintptr_t>(a.block_.data());
    a.base_ = a.block_.data() + ((kAlign - at % kAlign) % kAlign);
    a.size_ = bytes;
    return a;
  }
  Arena() = default;

  /// A View `label` of the given extents, not initialised: cut from the block, or (off)
  /// allocated on its own.
  template <class View, class ExecSpace, class... Extents>
  View take(ExecSpace const& space, std::string const& label, Extents... extents) {
    if (mode_ == Mode::off) return allocate<View>(space, label, extents...);
    using T = typename View::value_type;
    std::size_t const bytes = (sizeof(T) * ... * std::size_t(extents));
    unsigned char* const at = mode_ == Mode::cut ? base_ + used_ : nullptr;
    used_ += (bytes + kAlign - 1) / kAlign * kAlign;
    if (mode_ == Mode::cut && used_ > size_)
      throw std::logic_error("extract: the workspace's cuts outgrew their measure (" + label + ")");
    return View(reinterpret_cast<T*>(at), extents...);
  }

  /// Bytes the cuts take (measure) or the block holds (cut); 0 when off.
  std::size_t bytes() const { return mode_ == Mode::cut ? size_ : used_; }
  /// Whether `p` points into the cuts' memory.
  bool holds(void const* p) const {
    auto const* c = static_cast<unsigned char const*>(p);
    return mode_ == Mode::cut && c >= base_ && c < base_ + size_;
  }
  /// The bytes of `v` that are not the block's (all of them unless it was cut from it).
  template <class View>
  std::size_t outside(View const& v) const {
    return holds(v.data()) ? 0 : v.span() * sizeof(typename View::value_type);
  }

 private:
  enum class Mode { off, measure, cut };
  using Block = Kokkos::View<unsigned char*, Mem>;
  // Every cut starts on a 256-byte boundary, as cudaMalloc's memory does (a View's own data
  // starts 128 bytes into it, after Kokkos' header; on a host 64).
  static constexpr std::size_t kAlign = 256;
  explicit Arena(Mode m) : mode_(m) {}
  Mode mode_ = Mode::off;
  Block block_;
  unsigned char* base_ = nullptr;  // the first 256-byte boundary in the block
  std::size_t size_ = 0;           // bytes from base_ the cuts may take
  std::size_t used_ = 0;
};

}  // namespace kspecter::extract::detail
