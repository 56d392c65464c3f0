// extract_frame (spot-provider form) for Kokkos::OpenMP, when this build enables it.
#include <Kokkos_Core.hpp>

#if defined(KOKKOS_ENABLE_OPENMP)
#include "impl/extract_frame.hpp"

namespace kspecter::extract {
template FrameResult extract_frame<Kokkos::OpenMP>(
    Kokkos::OpenMP const&, SpotProvider<Kokkos::OpenMP::memory_space> const&, SpotGeometry const&,
    ImageView<Kokkos::OpenMP::memory_space>, ImageView<Kokkos::OpenMP::memory_space>,
    ExtractOptions const&, StageTimes*);
}  // namespace kspecter::extract
#endif
