// The simulator's host entry point: one instantiation of simulate() on the default host
// execution space, in a file compiled without floating-point contraction (CMakeLists.txt),
// so that its output does not depend on the compiler's choice of fused multiply-adds.
#include <kspecter/sim/simulate.hpp>

namespace kspecter::sim {

SimulatedImage simulate_on_host(psf::GaussHermitePsf const& psf, Spectra const& spectra,
                                SimulateOptions const& options, StageTimes* times) {
  return simulate(Kokkos::DefaultHostExecutionSpace(), psf, spectra, options, times);
}

}  // namespace kspecter::sim
