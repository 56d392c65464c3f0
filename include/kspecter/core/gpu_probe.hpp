// Whether this build's GPU backend has a GPU it can run on, asked of the GPU driver before
// Kokkos starts. A CUDA or HIP Kokkos initialises its GPU backend in Kokkos::initialize and
// aborts there when it finds no usable device, whatever backend the program then runs on;
// the probe lets a front end decide first (docs/architecture.md, "Backends").
#pragma once

#include <string>

namespace kspecter {

/// What the probe found.
struct GpuProbe {
  bool gpu_backend = false;  // this build has a GPU backend (CUDA or HIP)
  bool usable = false;       // ... and at least one device it can run on
  int devices = 0;           // devices the driver shows this process
  std::string platform;      // "CUDA", "HIP", or "" without a GPU backend
  std::string reason;        // why no device is usable, e.g. "no NVIDIA driver (...)"
};

/// Asks the GPU driver, loaded with dlopen (libcuda.so.1: cuInit, cuDeviceGetCount, the
/// driver's CUDA version and each device's compute capability against the one the kernels
/// were compiled for; libamdhip64: hipGetDeviceCount). Starts neither Kokkos nor the CUDA
/// runtime and never aborts, so it may run before MPI_Init. Without a GPU backend it returns
/// at once: gpu_backend = usable = false.
GpuProbe probe_gpu();

/// probe_gpu() of this process, run once: the front end's fallback and the environment's
/// device choice ask the driver one time between them.
GpuProbe const& gpu_probe();

}  // namespace kspecter
