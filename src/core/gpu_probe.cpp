// The GPU probe: the driver's own library opened with dlopen, so that a node without a driver
// (or without a device) gives a reason instead of an abort.
#include <kspecter/core/gpu_probe.hpp>

#include <Kokkos_Macros.hpp>
#ifdef KOKKOS_ENABLE_CUDA
#include <cuda_runtime_api.h>  // CUDART_VERSION: the CUDA this build's runtime belongs to
#endif

#include <dlfcn.h>

#include <cstdlib>
#include <initializer_list>
#include <string>

namespace kspecter {

namespace {

// A shared library opened for the probe and closed after it.
class Library {
 public:
  explicit Library(std::initializer_list<char const*> names) {
    for (char const* n : names) {
      handle_ = dlopen(n, RTLD_NOW | RTLD_LOCAL);
      if (handle_) return;
      char const* e = dlerror();
      if (error_.empty()) error_ = e ? e : n;
    }
  }
  ~Library() {
    if (handle_) dlclose(handle_);
  }
  Library(Library const&) = delete;
  Library& operator=(Library const&) = delete;
  explicit operator bool() const { return handle_ != nullptr; }
  std::string const& error() const { return error_; }
  template <class F>
  F symbol(char const* name) const {
    return reinterpret_cast<F>(dlsym(handle_, name));
  }

 private:
  void* handle_ = nullptr;
  std::string error_;
};

// " (NAME=value)" when the variable is set: it may be why no device shows.
std::string visible_devices_note(char const* var) {
  char const* v = std::getenv(var);
  return v ? std::string(" (") + var + "=" + v + ")" : std::string();
}

#ifdef KOKKOS_ENABLE_CUDA
// The compute capability the kernels were compiled for (Kokkos_ARCH_*), 0 when not known.
constexpr int compiled_capability() {
#if defined(KOKKOS_ARCH_BLACKWELL120)
  return 120;
#elif defined(KOKKOS_ARCH_BLACKWELL100)
  return 100;
#elif defined(KOKKOS_ARCH_HOPPER90)
  return 90;
#elif defined(KOKKOS_ARCH_ADA89)
  return 89;
#elif defined(KOKKOS_ARCH_AMPERE86)
  return 86;
#elif defined(KOKKOS_ARCH_AMPERE80)
  return 80;
#elif defined(KOKKOS_ARCH_TURING75)
  return 75;
#elif defined(KOKKOS_ARCH_VOLTA72)
  return 72;
#elif defined(KOKKOS_ARCH_VOLTA70)
  return 70;
#elif defined(KOKKOS_ARCH_PASCAL61)
  return 61;
#elif defined(KOKKOS_ARCH_PASCAL60)
  return 60;
#else
  return 0;
#endif
}

// Whether Kokkos::Cuda::initialize accepts a device of capability `device` for kernels
// compiled for `compiled`: Kokkos 3 wants the same major version, Kokkos 4 any newer device.
constexpr bool runs_on(int compiled, int device) {
  if (compiled == 0) return true;
  if (KOKKOS_VERSION < 40000) return compiled / 10 == device / 10 && compiled <= device;
  return compiled <= device;
}

// The name of a CUresult a node without a usable GPU gives, where cuGetErrorName gives none:
// the toolkit's stub libcuda (no driver behind it) answers every call with error 34.
std::string cuda_error_name(int r) {
  switch (r) {
    case 3: return "CUDA_ERROR_NOT_INITIALIZED";
    case 34: return "CUDA_ERROR_STUB_LIBRARY (libcuda.so.1 is the toolkit's stub, not a driver)";
    case 46: return "CUDA_ERROR_DEVICE_UNAVAILABLE";
    case 100: return "CUDA_ERROR_NO_DEVICE";
    case 803: return "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH";
    default: return "error " + std::to_string(r);
  }
}

std::string capability(int cc) { return std::to_string(cc / 10) + "." + std::to_string(cc % 10); }

void probe_cuda(GpuProbe& p) {
  using Result = int;  // CUresult
  Library cuda({"libcuda.so.1"});
  if (!cuda) {
    p.reason = "no NVIDIA driver (" + cuda.error() + ")";
    return;
  }
  auto init = cuda.symbol<Result (*)(unsigned)>("cuInit");
  auto driver_version = cuda.symbol<Result (*)(int*)>("cuDriverGetVersion");
  auto count = cuda.symbol<Result (*)(int*)>("cuDeviceGetCount");
  auto get = cuda.symbol<Result (*)(int*, int)>("cuDeviceGet");
  auto attribute = cuda.symbol<Result (*)(int*, int, int)>("cuDeviceGetAttribute");
  auto name = cuda.symbol<Result (*)(char*, int, int)>("cuDeviceGetName");
  auto error_name = cuda.symbol<Result (*)(Result, char const**)>("cuGetErrorName");
  if (!init || !driver_version || !count || !get || !attribute || !name) {
    p.reason = "libcuda.so.1 lacks the CUDA driver API";
    return;
  }
  auto failed = [&](char const* call, Result r) {
    char const* text = nullptr;
    if (error_name && error_name(r, &text) != 0) text = nullptr;
    p.reason = std::string(call) + " failed: " + (text ? text : cuda_error_name(r)) +
               visible_devices_note("CUDA_VISIBLE_DEVICES");
  };
  if (Result r = init(0)) return failed("cuInit", r);
  int version = 0;
  driver_version(&version);
  // Minor-version compatibility: a driver of CUDA X.0 runs every X.y runtime.
  if (version / 1000 < CUDART_VERSION / 1000) {
    p.reason = "the NVIDIA driver supports CUDA " + std::to_string(version / 1000) + "." +
               std::to_string(version % 1000 / 10) + ", this build needs CUDA " +
               std::to_string(CUDART_VERSION / 1000);
    return;
  }
  if (Result r = count(&p.devices)) return failed("cuDeviceGetCount", r);
  if (p.devices == 0) {
    p.reason = "no CUDA device" + visible_devices_note("CUDA_VISIBLE_DEVICES");
    return;
  }
  constexpr int major_attr = 75, minor_attr = 76;  // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_*
  for (int i = 0; i < p.devices; ++i) {
    int dev = 0, major = 0, minor = 0;
    if (get(&dev, i) || attribute(&major, major_attr, dev) || attribute(&minor, minor_attr, dev))
      continue;
    if (runs_on(compiled_capability(), 10 * major + minor)) {
      p.usable = true;
      return;
    }
    if (p.reason.empty()) {
      char text[256] = {};
      name(text, sizeof text - 1, dev);
      p.reason = "GPU " + std::to_string(i) + " (" + text + ") has compute capability " +
                 capability(10 * major + minor) + ", this build's kernels are for " +
                 capability(compiled_capability());
    }
  }
}
#endif

#ifdef KOKKOS_ENABLE_HIP
void probe_hip(GpuProbe& p) {
  using Result = int;  // hipError_t
  Library hip({"libamdhip64.so", "libamdhip64.so.6", "libamdhip64.so.5"});
  if (!hip) {
    p.reason = "no HIP runtime (" + hip.error() + ")";
    return;
  }
  auto count = hip.symbol<Result (*)(int*)>("hipGetDeviceCount");
  auto error_name = hip.symbol<char const* (*)(Result)>("hipGetErrorName");
  if (!count) {
    p.reason = "libamdhip64 lacks hipGetDeviceCount";
    return;
  }
  if (Result r = count(&p.devices)) {
    p.devices = 0;
    p.reason = std::string("hipGetDeviceCount failed: ") +
               (error_name ? error_name(r) : "error " + std::to_string(r)) +
               visible_devices_note("HIP_VISIBLE_DEVICES") +
               visible_devices_note("ROCR_VISIBLE_DEVICES");
    return;
  }
  if (p.devices == 0) {
    p.reason = "no HIP device" + visible_devices_note("HIP_VISIBLE_DEVICES") +
               visible_devices_note("ROCR_VISIBLE_DEVICES");
    return;
  }
  p.usable = true;
}
#endif

}  // namespace

GpuProbe const& gpu_probe() {
  static GpuProbe const probe = probe_gpu();
  return probe;
}

GpuProbe probe_gpu() {
  GpuProbe p;
#if defined(KOKKOS_ENABLE_CUDA)
  p.gpu_backend = true;
  p.platform = "CUDA";
  probe_cuda(p);
#elif defined(KOKKOS_ENABLE_HIP)
  p.gpu_backend = true;
  p.platform = "HIP";
  probe_hip(p);
#else
  p.reason = "this build has no GPU backend";
#endif
  return p;
}

}  // namespace kspecter
