// kspecter's version and a description of the build and the machine it runs on.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace kspecter {

/// "MAJOR.MINOR.PATCH" of this library, followed in a build from a git checkout by "+" and
/// `git describe --tags --always --dirty` with '-' made '.' ("0.1.0+6d810f5.dirty": a PEP 440
/// local version). --version, info, Python's __version__ and the frames' DEPVERnn carry it.
char const* version();

/// What `kspecter info` reports.
struct RuntimeInfo {
  std::string kspecter_version;
  std::string kokkos_version;           // e.g. "3.4.01"
  std::vector<std::string> backends;    // enabled Kokkos execution spaces, e.g. {"Serial","OpenMP"}
  std::string default_space;            // Kokkos::DefaultExecutionSpace::name()
  int concurrency = 0;                  // DefaultExecutionSpace concurrency
  int host_concurrency = 0;             // DefaultHostExecutionSpace concurrency
  int device_id = -1;                   // GPU ordinal, -1 without a GPU backend
  std::string device_name;              // GPU name, empty without one
  std::size_t device_memory_bytes = 0;  // total GPU memory
  int device_compute_capability = 0;    // e.g. 90 for Hopper
};
/// The facts of the build, known without starting Kokkos: kspecter's and Kokkos' versions and
/// the backends; the other fields keep their defaults.
RuntimeInfo build_info();
/// Everything. Call after Kokkos::initialize.
RuntimeInfo runtime_info();

}  // namespace kspecter
