// The one place where kspecter bridges Kokkos 3.4 (Debian's Trilinos 13.2) and Kokkos 4.x/5.x
// (Spack). Everything else in kspecter uses the API the versions share.
#pragma once

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

// KSPECTER_CUDA_DMMA: CUDA for sm_80 and later, whose fp64 tensor cores (mma.m8n8k4.f64) the
// DMMA kernels of solve/ use. Kokkos 3.4 and 4.x share these generation macros.
#if defined(KOKKOS_ENABLE_CUDA) && \
    (defined(KOKKOS_ARCH_AMPERE) || defined(KOKKOS_ARCH_ADA89) || defined(KOKKOS_ARCH_HOPPER))
#define KSPECTER_CUDA_DMMA 1
#else
#define KSPECTER_CUDA_DMMA 0
#endif

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
// Kokkos::quiet_NaN arrived in 4.0; the builtin is what GCC, Clang, nvcc and hipcc share.
KOKKOS_INLINE_FUNCTION double quiet_nan() { return __builtin_nan(""); }
KOKKOS_INLINE_FUNCTION double infinity() { return __builtin_inf(); }
KOKKOS_INLINE_FUNCTION double cos(double x) { return kmath::cos(x); }
KOKKOS_INLINE_FUNCTION double sin(double x) { return kmath::sin(x); }
KOKKOS_INLINE_FUNCTION double lgamma(double x) { return kmath::lgamma(x); }
// 1 / sqrt(x): on a GPU its reciprocal square root (one long-latency sequence where sqrt and
// a division are two), on a CPU the division.
KOKKOS_INLINE_FUNCTION double rsqrt(double x) {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
  return ::rsqrt(x);
#else
  return 1.0 / kmath::sqrt(x);
#endif
}
KOKKOS_INLINE_FUNCTION float sqrt(float x) { return kmath::sqrt(x); }
KOKKOS_INLINE_FUNCTION float fabs(float x) { return kmath::fabs(x); }
KOKKOS_INLINE_FUNCTION bool isfinite(float x) { return kmath::isfinite(x); }

// Integer min and max in device code: Kokkos::min/max only exist from 3.7 (3.6 has them in
// Experimental), and std::min is not a device function on every backend.
KOKKOS_INLINE_FUNCTION int imin(int a, int b) { return a < b ? a : b; }
KOKKOS_INLINE_FUNCTION int imax(int a, int b) { return a > b ? a : b; }

#if defined(KOKKOS_ENABLE_HIP)
// The HIP execution space left Kokkos::Experimental in Kokkos 4.0; 4.6 has only Kokkos::HIP.
#if KOKKOS_VERSION >= 40000
using HIP = ::Kokkos::HIP;
#else
using HIP = ::Kokkos::Experimental::HIP;
#endif
#endif

// Settings for Kokkos::initialize.
struct InitOptions {
  int num_threads = -1;  // host threads; -1 leaves Kokkos' default
  int device_id = -1;    // GPU ordinal; -1 leaves Kokkos' default
  // --kokkos-* flags as the user gave them (--kokkos-tools-libs=..., --kokkos-help, ...).
  std::vector<std::string> kokkos_args;
};

namespace detail {

// The spelling this Kokkos understands of a --kokkos-* flag given in either spelling: 4.x
// renamed --kokkos-threads to --kokkos-num-threads and --kokkos-tools-library to
// --kokkos-tools-libs (3.4 knows only the old names; 4.x warns about them).
inline std::string kokkos_flag(std::string const& arg) {
#if KOKKOS_VERSION >= 30700
  std::pair<char const*, char const*> const renamed[] = {
      {"--kokkos-threads", "--kokkos-num-threads"},
      {"--kokkos-tools-library", "--kokkos-tools-libs"}};
#else
  std::pair<char const*, char const*> const renamed[] = {
      {"--kokkos-num-threads", "--kokkos-threads"},
      {"--kokkos-tools-libs", "--kokkos-tools-library"}};
#endif
  std::string const name = arg.substr(0, arg.find('='));
  for (auto const& [from, to] : renamed)
    if (name == from) return to + arg.substr(name.size());
  return arg;
}

inline bool has_flag(std::vector<std::string> const& args, std::string const& name) {
  for (auto const& a : args)
    if (a.substr(0, a.find('=')) == name) return true;
  return false;
}

}  // namespace detail

// Kokkos 3.4 and 4.x read --kokkos-* flags only in Kokkos::initialize(argc, argv) (3.4 has
// no public parser, and InitArguments/InitializationSettings cannot be merged with one), so
// kspecter hands Kokkos an argv of the user's --kokkos-* flags plus its own settings as
// flags; a user's --kokkos-num-threads or --kokkos-device-id takes precedence. The
// environment (KOKKOS_TOOLS_LIBS, KOKKOS_PROFILE_LIBRARY, OMP_NUM_THREADS...) is read by
// Kokkos as usual.
inline void initialize(InitOptions const& opt) {
#if KOKKOS_VERSION >= 30700
  std::string const threads_flag = "--kokkos-num-threads";
#else
  std::string const threads_flag = "--kokkos-threads";
#endif
  std::vector<std::string> args{"kspecter"};
  for (auto const& a : opt.kokkos_args) args.push_back(detail::kokkos_flag(a));
  if (opt.num_threads > 0 && !detail::has_flag(args, threads_flag))
    args.push_back(threads_flag + "=" + std::to_string(opt.num_threads));
  if (opt.device_id >= 0 && !detail::has_flag(args, "--kokkos-device-id"))
    args.push_back("--kokkos-device-id=" + std::to_string(opt.device_id));
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  int argc = static_cast<int>(args.size());
  Kokkos::initialize(argc, argv.data());
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

// Sets `bytes` bytes at `p` (memory of `space`) to zero, ordered on `space`, where the backend
// has a memset of its own: CUDA's, on the instance's stream. Returns false where it did not
// (other backends, or the call failed): the caller fills instead. Kokkos 3.4 fills with a
// kernel far below the memory bandwidth (perf/gpu_runs.md, session 16).
template <class ExecSpace>
bool zero_bytes(ExecSpace const& space, void* p, std::size_t bytes) {
#if defined(KOKKOS_ENABLE_CUDA)
  if constexpr (std::is_same_v<ExecSpace, Kokkos::Cuda>)
    return cudaMemsetAsync(p, 0, bytes, space.cuda_stream()) == cudaSuccess;
#endif
  (void)space, (void)p, (void)bytes;
  return false;
}

// Orders what is queued on `waiter` from now on after what `done` has queued so far, without
// the host waiting: on a GPU an event recorded on `done`'s stream that `waiter`'s stream
// waits for. Kokkos (3.4 to 4.x) has no portable event, and a fence would stall the host's
// launches. Host backends: the side instance is the same instance (SideInstance), already in
// order; otherwise a fence.
template <class ExecSpace>
void wait_for(ExecSpace const& waiter, ExecSpace const& done) {
#if defined(KOKKOS_ENABLE_CUDA)
  if constexpr (std::is_same_v<ExecSpace, Kokkos::Cuda>) {
    cudaEvent_t e;
    if (cudaEventCreateWithFlags(&e, cudaEventDisableTiming) == cudaSuccess) {
      bool const ok = cudaEventRecord(e, done.cuda_stream()) == cudaSuccess &&
                      cudaStreamWaitEvent(waiter.cuda_stream(), e, 0) == cudaSuccess;
      cudaEventDestroy(e);  // released once the wait is over
      if (ok) return;
    }
  }
#elif defined(KOKKOS_ENABLE_HIP)
  if constexpr (std::is_same_v<ExecSpace, HIP>) {
    hipEvent_t e;
    if (hipEventCreateWithFlags(&e, hipEventDisableTiming) == hipSuccess) {
      bool const ok = hipEventRecord(e, done.hip_stream()) == hipSuccess &&
                      hipStreamWaitEvent(waiter.hip_stream(), e, 0) == hipSuccess;
      (void)hipEventDestroy(e);
      if (ok) return;
    }
  }
#endif
  if constexpr (Kokkos::SpaceAccessibility<ExecSpace, Kokkos::HostSpace>::accessible) {
    (void)waiter, (void)done;  // one instance: in order
  } else {
    done.fence();
  }
}

// A second instance of a GPU execution space, on a stream of its own, so that its work (the
// stitch's copies, extract/impl/stitch.hpp) overlaps the first instance's kernels. 4.x makes
// one with partition_space; 3.4 has only Cuda(cudaStream_t), whose stream the caller owns (a
// non-blocking one: 3.4's default instance runs on the legacy stream, which would otherwise
// wait for it). Elsewhere, and on host backends, it is `space` itself: the work is then
// ordered after the first instance's, which is correct, only not overlapped.
template <class ExecSpace>
class SideInstance {
 public:
  explicit SideInstance(ExecSpace const& space) : space_(space) {
    if constexpr (!Kokkos::SpaceAccessibility<ExecSpace, Kokkos::HostSpace>::accessible) {
#if KOKKOS_VERSION >= 40000
      space_ = Kokkos::Experimental::partition_space(space, 1)[0];
#elif defined(KOKKOS_ENABLE_CUDA)
      if constexpr (std::is_same_v<ExecSpace, Kokkos::Cuda>) {
        if (cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking) == cudaSuccess)
          space_ = Kokkos::Cuda(stream_);
        else
          stream_ = nullptr;
      }
#endif
    }
  }
  ~SideInstance() {
    space_.fence();
#if KOKKOS_VERSION < 40000 && defined(KOKKOS_ENABLE_CUDA)
    if (stream_) {
      space_ = ExecSpace();  // the instance goes before its stream
      cudaStreamDestroy(stream_);
    }
#endif
  }
  SideInstance(SideInstance const&) = delete;
  SideInstance& operator=(SideInstance const&) = delete;

  ExecSpace const& get() const { return space_; }

 private:
  ExecSpace space_;
#if KOKKOS_VERSION < 40000 && defined(KOKKOS_ENABLE_CUDA)
  cudaStream_t stream_ = nullptr;
#endif
};

}  // namespace kspecter::compat
