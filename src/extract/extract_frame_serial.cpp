// extract_frame (spot-provider form) for Kokkos::Serial, when this build enables it.
#include <Kokkos_Core.hpp>

#if defined(KOKKOS_ENABLE_SERIAL)
#include "impl/extract_frame.hpp"

namespace kspecter::extract {
template FrameResult extract_frame<Kokkos::Serial>(
    Kokkos::Serial const&, SpotProvider<Kokkos::Serial::memory_space> const&, SpotGeometry const&,
    ImageView<Kokkos::Serial::memory_space>, ImageView<Kokkos::Serial::memory_space>,
    ExtractOptions const&, StageTimes*);
}  // namespace kspecter::extract
#endif
