#include <kspecter/core/kokkos_compat.hpp>
#include <kspecter/core/version.hpp>
#include <kspecter_backend_list.hpp>

#include <Kokkos_Core.hpp>
#ifdef KOKKOS_ENABLE_CUDA
#include <cuda_runtime.h>
#endif

#include <string>

namespace kspecter {

namespace detail {
char const* git_describe();  // generated at build time (cmake/git_describe.cmake)
}

char const* version() {
  static std::string const v =
      *detail::git_describe() ? std::string(KSPECTER_VERSION_STRING) + "+" + detail::git_describe()
                              : std::string(KSPECTER_VERSION_STRING);
  return v.c_str();
}

RuntimeInfo build_info() {
  RuntimeInfo info;
  info.kspecter_version = version();
  int const v = KOKKOS_VERSION;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%d.%d.%02d", v / 10000, (v / 100) % 100, v % 100);
  info.kokkos_version = buf;
  detail::for_each_backend(
      [&](char const*, auto tag) { info.backends.push_back(decltype(tag)::space::name()); });
  return info;
}

RuntimeInfo runtime_info() {
  RuntimeInfo info = build_info();
  info.default_space = Kokkos::DefaultExecutionSpace::name();
  info.concurrency = Kokkos::DefaultExecutionSpace().concurrency();
  info.host_concurrency = Kokkos::DefaultHostExecutionSpace().concurrency();
  info.device_id = compat::device_id();
#ifdef KOKKOS_ENABLE_CUDA
  cudaDeviceProp prop;
  if (info.device_id >= 0 && cudaGetDeviceProperties(&prop, info.device_id) == cudaSuccess) {
    info.device_name = prop.name;
    info.device_memory_bytes = prop.totalGlobalMem;
    info.device_compute_capability = 10 * prop.major + prop.minor;
  }
#endif
  return info;
}

}  // namespace kspecter
