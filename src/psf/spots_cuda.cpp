// The one CUDA instantiation of compute_spots, evaluate_traces and evaluate_param, compiled without
// fused multiply-adds (CMakeLists.txt) so that GPU spots agree with the host's within 1e-14
// (spots.hpp).
#include <kspecter/psf/spots.hpp>

#ifdef KOKKOS_ENABLE_CUDA
namespace kspecter::psf {
template void compute_spots<Kokkos::Cuda>(Kokkos::Cuda const&, GaussHermitePsf const&,
                                          DevicePsf<Kokkos::CudaSpace> const&, int, int,
                                          Kokkos::View<double const*, Kokkos::CudaSpace>,
                                          Spots<Kokkos::CudaSpace>&, SpotOptions const&);
template void evaluate_traces<Kokkos::Cuda>(
    Kokkos::Cuda const&, DevicePsf<Kokkos::CudaSpace> const&, int, int,
    Kokkos::View<double const*, Kokkos::CudaSpace>,
    Kokkos::View<double**, Kokkos::LayoutRight, Kokkos::CudaSpace>&,
    Kokkos::View<double**, Kokkos::LayoutRight, Kokkos::CudaSpace>&);
template void evaluate_param<Kokkos::Cuda>(
    Kokkos::Cuda const&, DevicePsf<Kokkos::CudaSpace> const&, int, int, int,
    Kokkos::View<double const*, Kokkos::CudaSpace>,
    Kokkos::View<double**, Kokkos::LayoutRight, Kokkos::CudaSpace>&);
}  // namespace kspecter::psf
#endif
