// The pieces of the extension module _kspecter (the package kspecter's C++ half): each source
// file binds one part and declares its registration here.
#pragma once

#include <kspecter/extract/backend.hpp>
#include <kspecter/extract/extractor.hpp>
#include <kspecter/io/frame_file.hpp>
#include <kspecter/psf/gauss_hermite_psf.hpp>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace kspecter::python {

namespace py = pybind11;

// ------------------------------------------------------------------ arrays (arrays.cpp)

/// A caller's 2-D array as the library reads it, with the Python object that owns the memory
/// (the array itself, or the converted copy when its type or layout needed one).
struct BorrowedImage {
  extract::ImageArray array;
  py::object owner;
};

/// numpy arrays of native float32/float64 are borrowed as they are (any strides); other numpy
/// types are converted to float64 once; objects with __cuda_array_interface__ (cupy, numba)
/// are borrowed on the device (float32/float64 only). `what` names the argument in errors.
BorrowedImage borrow_image(py::handle obj, std::string const& what);

/// The memory of an array that the library fills, C-contiguous, of the given numpy type
/// string ("<f8", "<u4") and shape: a writable numpy array when `on_device` is false, else
/// a device array (__cuda_array_interface__, on kspecter's GPU). A ValueError or TypeError
/// names `what` when it is not.
void* output_array(py::handle obj, std::string const& what, std::string const& typestr,
                   std::vector<py::ssize_t> const& shape, bool on_device);

/// The GPU that holds `obj`'s data when it is a device array (__cuda_array_interface__ in a
/// CUDA build), else -1.
int device_of(py::handle obj);

/// A numpy array that takes over `v` (no copy): freed when the array is.
template <class T>
py::array_t<T> adopt(std::vector<T>&& v, std::vector<py::ssize_t> const& shape) {
  auto* owned = new std::vector<T>(std::move(v));
  py::capsule free_it(owned, [](void* p) { delete static_cast<std::vector<T>*>(p); });
  return py::array_t<T>(shape, owned->data(), free_it);
}

/// os.fspath(p) as a file name for the library; ValueError when it holds a NUL byte (the C
/// library would stop there and read another file). Every entry taking a path goes through it.
std::string fspath(py::handle p);

// ------------------------------------------------------------------ frames (desi_frame.cpp)

/// One header card from Python, typed as FITS types it: bool (numpy's too) -> logical,
/// integers -> integer, floats -> real, anything else -> its str() as a string.
struct HeaderCard {
  enum class Kind { logical, integer, number, string } kind = Kind::string;
  std::string key, text;
  bool logical = false;
  long long integer = 0;
  double number = 0;
};
std::vector<HeaderCard> header_cards(py::handle dict);
/// Sets each card (replacing a card of the same key where it is).
void set_cards(io::FitsHeader& header, std::vector<HeaderCard> const& cards);

/// What the CLI takes from around an extraction into its frame (write_frame(preproc=...)).
struct DesiFrameInputs {
  std::string preproc_file;              // its IMAGE header and FIBERMAP, when named
  std::vector<HeaderCard> image_header;  // else the preproc header as a dict
  std::string fibermap_file;             // -f: the FIBERMAP from this file instead
  std::string psf_file;                  // IN_PSF, ORIG_PSF and FIBERMIN
  double grid[3] = {0, 0, 0};            // the grid asked for: wmin, wmax, dw
  bool scores = true;
  std::vector<double> flux, ivar;  // [nspec][nwave], for SCORES
};
/// Fills `out`'s header (desispec's FLUX header), FIBERMAP rows and SCORES as the CLI does.
void add_desi_frame_parts(io::FrameData& out, DesiFrameInputs const& in);
/// desispec's SCORES of `out`'s grid from the unrounded flux and ivar.
void add_scores(io::FrameData& out, std::vector<double> const& flux,
                std::vector<double> const& ivar);

// ------------------------------------------------------------------ registration

/// The PSF type (kspecter.Psf) and read_psf; psf_from() takes a Psf or a file name.
void bind_psf(py::module_& m);
std::shared_ptr<psf::GaussHermitePsf const> psf_from(py::handle obj);

/// initialize / finalize / is_initialized / backends (Kokkos and MPI for the process).
void bind_runtime(py::module_& m);
/// Brings Kokkos up with the settings from the environment when nobody has yet. Its GPU is
/// the one named (initialize(device=), $KSPECTER_DEVICE), else `array_device` (the GPU of the
/// first call's arrays) when >= 0, else the calling thread's current CUDA device (cupy's).
void ensure_initialized(int array_device = -1);
/// Releases `e`'s device memory when Kokkos ends (finalize), if `e` still lives then.
void release_before_finalize(std::shared_ptr<extract::Extractor> const& e);
/// The backend a call runs on: `gpu` True/False/None -> cuda / the host backend / the default.
std::string backend_for(py::handle gpu);

/// _extract: one frame through the library's job.
void bind_extract(py::module_& m);

/// read_image, read_frame, write_frame, write_model.
void bind_files(py::module_& m);

}  // namespace kspecter::python
