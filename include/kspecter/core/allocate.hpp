// Views whose size comes from the input (batches, spots, the PSF's coefficients), allocated so
// that a failure to get their memory is thrown as what it is: kspecter::OutOfMemory.
#pragma once

#include <kspecter/core/huge_pages.hpp>
#include <kspecter/core/kokkos_compat.hpp>

#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <new>
#include <string>
#include <type_traits>

namespace kspecter {

/// The memory of a View could not be had. Kokkos 3.4 to 4.6 and its develop branch report a
/// failed View allocation as a std::runtime_error, worded differently in each version (3.4's
/// HostSpace says only "Memory allocation failure"), never as a type of its own: allocate()
/// turns it into this type, which names the View and its size. A std::bad_alloc, like a failed
/// operator new, so that one test recognises every kind of out-of-memory.
class OutOfMemory : public std::bad_alloc {
 public:
  /// `cause`: what Kokkos said; its first line is kept.
  OutOfMemory(std::string label, std::size_t bytes, std::string const& cause);
  char const* what() const noexcept override { return what_.c_str(); }
  std::string const& label() const noexcept { return label_; }
  std::size_t bytes() const noexcept { return bytes_; }

 private:
  std::string label_, what_;
  std::size_t bytes_ = 0;
};

/// A View `label` of the given extents in `space`'s memory, not initialised. The only thing
/// a View constructor without initialisation does that can fail is getting the memory, so
/// any exception from it is an OutOfMemory.
template <class View, class ExecSpace, class... Extents>
View allocate(ExecSpace const& space, std::string const& label, Extents... extents) {
  static_assert(sizeof...(Extents) == View::rank_dynamic,
                "allocate: one extent per dynamic dimension");
  try {
    return View(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, label), extents...);
  } catch (std::exception const& e) {
    std::size_t bytes = sizeof(typename View::value_type);
    for (std::size_t n : {std::size_t(extents)...}) bytes *= n;
    throw OutOfMemory(label, bytes, e.what());
  }
}

/// Sets every entry of a contiguous View to `value` on `space`: zeros of a number type by the
/// backend's memset where it has one (compat::zero_bytes), anything else as one 1-D fill of
/// the span, where Kokkos 3.4 fills a View of rank 2 or more through a multi-dimensional range.
template <class ExecSpace, class View>
void fill_span(ExecSpace const& space, View const& v, typename View::const_value_type& value) {
  using T = typename View::non_const_value_type;
  using Flat =
      Kokkos::View<T*, typename View::memory_space, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  if (!v.span_is_contiguous()) return Kokkos::deep_copy(space, v, value);
  if constexpr (std::is_arithmetic_v<T>)
    if (value == T(0) && !std::signbit(double(value)) &&  // -0.0 is not all zero bits
        compat::zero_bytes(space, v.data(), v.span() * sizeof(T)))
      return;
  Kokkos::deep_copy(space, Flat(v.data(), v.span()), value);
}

/// allocate(), then filled with zeros on `space` (ordered before what is queued on it later).
template <class View, class ExecSpace, class... Extents>
View allocate_zeroed(ExecSpace const& space, std::string const& label, Extents... extents) {
  View v = allocate<View>(space, label, extents...);
  fill_span(space, v, typename View::non_const_value_type{});
  return v;
}

/// Asks Linux for transparent huge pages over the 2 MiB-aligned interior of a host View's
/// memory (no effect elsewhere). For buffers that kernels write whole right after allocating
/// them (a batch's spots, iCov band, covariance blocks): there the first-touch page faults of
/// 4 KiB pages cost as much as the kernels' arithmetic on a CPU node (perf/cpu_profile.md),
/// and huge pages fault 512 times less. Not for buffers touched sparsely (the CCD-sized
/// weights of a one-bundle extraction), where every huge page touched is zeroed whole. A
/// hint: the system's THP mode may ignore it, and results never depend on it.
template <class View>
void advise_huge_pages(View const& v) noexcept {
  if constexpr (std::is_same_v<typename View::memory_space, Kokkos::HostSpace>)
    detail::advise_huge_pages(v.data(), v.span() * sizeof(typename View::value_type));
}

}  // namespace kspecter
