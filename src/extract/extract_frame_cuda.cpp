// extract_frame (spot-provider form) for Kokkos::Cuda, when this build enables it.
#include <Kokkos_Core.hpp>

#if defined(KOKKOS_ENABLE_CUDA)
#include "impl/extract_frame.hpp"

namespace kspecter::extract {
template FrameResult extract_frame<Kokkos::Cuda>(Kokkos::Cuda const&,
                                                 SpotProvider<Kokkos::Cuda::memory_space> const&,
                                                 SpotGeometry const&,
                                                 ImageView<Kokkos::Cuda::memory_space>,
                                                 ImageView<Kokkos::Cuda::memory_space>,
                                                 ExtractOptions const&, StageTimes*);
}  // namespace kspecter::extract
#endif
