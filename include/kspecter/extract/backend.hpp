// Extraction of one frame on a Kokkos backend chosen by name at run time, from image arrays
// wherever the caller holds them: a preproc file's float pixels on the host, a numpy array,
// or a cupy array on the GPU. Arrays already in the backend's memory as row-major doubles are
// used where they are (no copy); anything else is converted once into a device image.
#pragma once

#include <kspecter/core/profiling.hpp>
#include <kspecter/extract/frame.hpp>
#include <kspecter/extract/options.hpp>
#include <kspecter/psf/gauss_hermite_psf.hpp>

#include <cstddef>
#include <string>
#include <vector>

namespace kspecter::extract {

/// A 2-D array [ny][nx] the caller owns (not copied, not freed): element (y, x) is at
/// data + y * row_stride + x * col_stride (strides in elements, not bytes).
struct ImageArray {
  enum class Type { f32, f64 };
  void const* data = nullptr;
  Type type = Type::f64;
  int ny = 0, nx = 0;
  std::ptrdiff_t row_stride = 0, col_stride = 1;
  bool on_device = false;  // in the GPU backend's memory (CUDA device memory), else host memory

  /// A row-major host array of floats or doubles.
  static ImageArray host(float const* p, int ny, int nx) {
    return {p, Type::f32, ny, nx, nx, 1, false};
  }
  static ImageArray host(double const* p, int ny, int nx) {
    return {p, Type::f64, ny, nx, nx, 1, false};
  }
  /// Row-major doubles: usable in place by a backend that can reach its memory.
  bool contiguous_f64() const { return type == Type::f64 && col_stride == 1 && row_stride == nx; }
};

/// `a`'s elements as row-major doubles on the host (one copy from the GPU for a device array).
std::vector<double> host_copy(ImageArray const& a);

/// Backend names a build accepts, comma-separated: "auto" (Kokkos' default execution space)
/// and the enabled ones among "serial", "openmp", "cuda", "hip" (the backend list,
/// cmake/kspecter_backends.cmake).
std::string backend_names();

/// This build's backends, in the backend list's order, without "auto".
std::vector<std::string> backend_list();

/// The backend list's name of `backend`: "auto" becomes the backend of Kokkos' default
/// execution space; throws ParameterError for a backend this build does not have.
std::string resolved_backend(std::string const& backend);

/// The execution space `backend` runs on (Kokkos' name, e.g. "OpenMP"); throws ParameterError
/// for a backend this build does not have.
std::string backend_space_name(std::string const& backend);

/// Whether `backend` ("auto" included) is one of this build's and runs on the host: its
/// execution space reaches host memory. False for a GPU backend and for a name the build
/// lacks.
bool backend_on_host(std::string const& backend);

/// This build's host backend: the last of the backend list's that runs on the host ("openmp"
/// where it is enabled, else "serial").
std::string host_backend();

/// This build's GPU backend ("cuda" or "hip"), or "" when it has none.
std::string gpu_backend();

/// Copies `bytes` bytes from host memory at `src` to the named backend's memory at `dst` (a
/// GPU's device memory, host memory for a host backend), and waits for the copy.
void copy_to_backend(std::string const& backend, void* dst, void const* src, std::size_t bytes);

/// Extracts a frame on the named backend. The image and inverse variance are brought to the
/// backend (stage kspecter::extract::upload, in `times`) unless both are row-major doubles
/// already in memory it can read; then they are read in place (no upload stage) and must stay
/// unchanged until this returns. Everything else is extract_frame's (frame.hpp), errors included; a
/// bad backend name, device array in a build without a GPU backend or arrays of different shapes
/// are a ParameterError.
FrameResult extract_frame(std::string const& backend, psf::GaussHermitePsf const& psf,
                          ImageArray const& image, ImageArray const& ivar,
                          ExtractOptions const& opt, StageTimes* times = nullptr,
                          ExtractHooks const& hooks = {});

}  // namespace kspecter::extract
