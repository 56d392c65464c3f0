// The one place where kspecter bridges Kokkos 3.4 (Debian's Trilinos 13.2) and Kokkos 4.x/5.x
// (Spack). Everything else in kspecter uses the API the versions share.
#pragma once

#include <Kokkos_Core.hpp>

namespace kspecter::compat {

// Mathematical functions moved from Kokkos::Experimental into Kokkos in 3.7; the old names
// are gone in 4.x.
#if KOKKOS_VERSION >= 30700
namespace kmath = ::Kokkos;
#else
namespace kmath = ::Kokkos::Experimental;
#endif

KOKKOS_INLINE_FUNCTION double sqrt(double x) { return kmath::sqrt(x); }
KOKKOS_INLINE_FUNCTION double exp(double x) { return kmath::exp(x); }
KOKKOS_INLINE_FUNCTION double log(double x) { return kmath::log(x); }
KOKKOS_INLINE_FUNCTION double erf(double x) { return kmath::erf(x); }
KOKKOS_INLINE_FUNCTION double floor(double x) { return kmath::floor(x); }
KOKKOS_INLINE_FUNCTION double fabs(double x) { return kmath::fabs(x); }
KOKKOS_INLINE_FUNCTION double pow(double x, double y) { return kmath::pow(x, y); }
KOKKOS_INLINE_FUNCTION bool isfinite(double x) { return kmath::isfinite(x); }
KOKKOS_INLINE_FUNCTION double cos(double x) { return kmath::cos(x); }
KOKKOS_INLINE_FUNCTION double lgamma(double x) { return kmath::lgamma(x); }
KOKKOS_INLINE_FUNCTION float sqrt(float x) { return kmath::sqrt(x); }
KOKKOS_INLINE_FUNCTION float fabs(float x) { return kmath::fabs(x); }
KOKKOS_INLINE_FUNCTION bool isfinite(float x) { return kmath::isfinite(x); }

// Integer min and max in device code: Kokkos::min/max only exist from 3.7 (3.6 has them in
// Experimental), and std::min is not a device function on every backend.
KOKKOS_INLINE_FUNCTION int imin(int a, int b) { return a < b ? a : b; }
KOKKOS_INLINE_FUNCTION int imax(int a, int b) { return a > b ? a : b; }

// Settings for Kokkos::initialize: InitArguments in 3.x, InitializationSettings in 4.x.
struct InitOptions {
  int num_threads = -1;  // host threads; -1 leaves Kokkos' default
  int device_id = -1;    // GPU ordinal; -1 leaves Kokkos' default
};

// Command-line Kokkos flags are not parsed: kspecter tools take --threads and --device.
inline void initialize(InitOptions const& opt) {
#if KOKKOS_VERSION >= 30700
  Kokkos::InitializationSettings s;
  if (opt.num_threads > 0) s.set_num_threads(opt.num_threads);
  if (opt.device_id >= 0) s.set_device_id(opt.device_id);
  Kokkos::initialize(s);
#else
  Kokkos::InitArguments a;
  a.num_threads = opt.num_threads;
  a.device_id = opt.device_id;
  Kokkos::initialize(a);
#endif
}

// The GPU ordinal this process drives, or -1 on a host-only build.
inline int device_id() {
#if defined(KOKKOS_ENABLE_CUDA) && KOKKOS_VERSION >= 40100
  return Kokkos::device_id();
#elif defined(KOKKOS_ENABLE_CUDA)
  return Kokkos::Cuda().cuda_device();
#elif defined(KOKKOS_ENABLE_HIP) && KOKKOS_VERSION >= 40100
  return Kokkos::device_id();
#else
  return -1;
#endif
}

}  // namespace kspecter::compat
