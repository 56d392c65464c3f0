// HDF5 frames: the FITS HDUs as datasets of the same names, the header as root attributes.
#include "atomic_output.hpp"
#include "frame_formats.hpp"

#include <kspecter/core/error.hpp>
#include <kspecter/core/version.hpp>

#include <mutex>

#ifdef KSPECTER_HAVE_HDF5
#include <hdf5.h>
#endif

namespace kspecter::io {

#ifdef KSPECTER_HAVE_HDF5
namespace {

// HDF5 1.10's exit handler closes the files still open, and crashes (SIGSEGV) on one whose
// close failed, such as a frame whose write went past `ulimit -f` or filled the disk: the
// run then died after reporting the error. kspecter closes every file itself and needs no
// exit handler. (Called before any other HDF5 call, as HDF5 requires: at static
// initialisation.)
[[maybe_unused]] herr_t const no_exit_handler = H5dont_atexit();

// Closes an HDF5 handle with the matching close function.
struct Handle {
  hid_t id;
  herr_t (*close)(hid_t);
  Handle(hid_t i, herr_t (*c)(hid_t)) : id(i), close(c) {}
  ~Handle() {
    if (id >= 0) close(id);
  }
  Handle(Handle const&) = delete;
  Handle& operator=(Handle const&) = delete;
  operator hid_t() const { return id; }
};

void check(herr_t rc, std::string const& file, std::string const& what) {
  if (rc < 0)
    throw InputError(file, what,
                     file_size_limit_reached()
                         ? "HDF5 call failed: the process's file size limit (ulimit -f) was "
                           "reached: EFBIG, File too large"
                         : "HDF5 call failed");
}

template <class T>
void write_dataset(hid_t file, std::string const& path, char const* name, hid_t type,
                   std::vector<hsize_t> const& dims, T const* data) {
  Handle space(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr), H5Sclose);
  Handle dset(H5Dcreate2(file, name, type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Dclose);
  check(dset.id, path, name);
  hsize_t n = 1;
  for (auto d : dims) n *= d;
  if (n > 0) check(H5Dwrite(dset, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data), path, name);
}

void write_string_attr(hid_t obj, char const* name, std::string const& value) {
  Handle type(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(type, value.size() > 0 ? value.size() : 1);
  Handle space(H5Screate(H5S_SCALAR), H5Sclose);
  Handle attr(H5Acreate2(obj, name, type, space, H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
  H5Awrite(attr, type, value.empty() ? "" : value.c_str());
}

template <class T>
void write_scalar_attr(hid_t obj, char const* name, hid_t type, T value) {
  Handle space(H5Screate(H5S_SCALAR), H5Sclose);
  Handle attr(H5Acreate2(obj, name, type, space, H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
  H5Awrite(attr, type, &value);
}

template <class T>
std::vector<T> read_dataset(hid_t file, std::string const& path, char const* name, hid_t type,
                            std::vector<hsize_t>& dims) {
  if (H5Lexists(file, name, H5P_DEFAULT) <= 0) throw InputError(path, name, "dataset not found");
  Handle dset(H5Dopen2(file, name, H5P_DEFAULT), H5Dclose);
  Handle space(H5Dget_space(dset), H5Sclose);
  int const rank = H5Sget_simple_extent_ndims(space);
  dims.assign(rank, 0);
  H5Sget_simple_extent_dims(space, dims.data(), nullptr);
  hsize_t n = 1;
  for (auto d : dims) n *= d;
  std::vector<T> out(n);
  if (n > 0) check(H5Dread(dset, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data()), path, name);
  return out;
}

}  // namespace

void write_frame_hdf5(std::string const& path, FrameData const& fr) {
  // HDF5 as Debian builds it is not thread-safe, and a batch writes frames on two threads.
  static std::mutex hdf5;
  std::lock_guard<std::mutex> lock(hdf5);
  AtomicOutput out(path);
  {
    hid_t id = H5I_INVALID_HID;
    out.create(
        [&](char const* temp) { id = H5Fcreate(temp, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT); });
    Handle file(id, H5Fclose);
    check(file.id, path, "");
    hsize_t const ns = fr.nspec, nw = fr.nwave, nd = 2 * fr.ndiag + 1;
    write_dataset(file, path, "FLUX", H5T_NATIVE_FLOAT, {ns, nw}, fr.flux.data());
    write_dataset(file, path, "IVAR", H5T_NATIVE_FLOAT, {ns, nw}, fr.ivar.data());
    write_dataset(file, path, "MASK", H5T_NATIVE_UINT32, {ns, nw}, fr.mask.data());
    write_dataset(file, path, "WAVELENGTH", H5T_NATIVE_DOUBLE, {nw}, fr.wavelength.data());
    write_dataset(file, path, "RESOLUTION", H5T_NATIVE_FLOAT, {ns, nd, nw}, fr.resolution.data());
    write_dataset(file, path, "CHI2PIX", H5T_NATIVE_FLOAT, {ns, nw}, fr.chi2pix.data());
    if (!fr.model.empty())
      write_dataset(file, path, "MODEL", H5T_NATIVE_FLOAT,
                    {hsize_t(fr.model_ny), hsize_t(fr.model_nx)}, fr.model.data());
    write_scalar_attr(file, "NSPEC", H5T_NATIVE_INT, fr.nspec);
    write_scalar_attr(file, "SPECMIN", H5T_NATIVE_INT, fr.specmin);
    write_scalar_attr(file, "SPECMAX", H5T_NATIVE_INT, fr.specmin + fr.nspec - 1);
    if (!fr.wavelength.empty()) {
      double const w0 = fr.wavelength.front(), w1 = fr.wavelength.back();
      write_scalar_attr(file, "WAVEMIN", H5T_NATIVE_DOUBLE, w0);
      write_scalar_attr(file, "WAVEMAX", H5T_NATIVE_DOUBLE, w1);
      write_scalar_attr(file, "WAVESTEP", H5T_NATIVE_DOUBLE,
                        fr.wavelength.size() > 1 ? (w1 - w0) / (fr.wavelength.size() - 1) : 0.0);
    }
    write_string_attr(file, "BUNIT", "electron/Angstrom");
    // The FITS header's keywords as text attributes (strings unquoted).
    for (std::string const& key : fr.header.keys()) {
      if (key == "NSPEC" || key == "SPECMIN" || key == "SPECMAX" || key == "BUNIT") continue;
      auto const text = fr.header.value_text(key);
      auto const s =
          text && !text->empty() && (*text)[0] == '\'' ? fr.header.get_string(key, path, "") : text;
      if (s && H5Aexists(file, key.c_str()) <= 0) write_string_attr(file, key.c_str(), *s);
    }
    check(H5Fflush(file, H5F_SCOPE_GLOBAL), path, "");
  }
  out.commit();
}

FrameData read_frame_hdf5(std::string const& path) {
  Handle file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  if (file.id < 0) throw InputError(path, "", "cannot open as HDF5");
  FrameData fr;
  std::vector<hsize_t> d;
  fr.flux = read_dataset<float>(file, path, "FLUX", H5T_NATIVE_FLOAT, d);
  if (d.size() != 2) throw InputError(path, "FLUX", "expected a 2-D dataset");
  fr.nspec = static_cast<int>(d[0]);
  fr.nwave = static_cast<int>(d[1]);
  fr.ivar = read_dataset<float>(file, path, "IVAR", H5T_NATIVE_FLOAT, d);
  fr.mask = read_dataset<std::uint32_t>(file, path, "MASK", H5T_NATIVE_UINT32, d);
  fr.wavelength = read_dataset<double>(file, path, "WAVELENGTH", H5T_NATIVE_DOUBLE, d);
  fr.resolution = read_dataset<float>(file, path, "RESOLUTION", H5T_NATIVE_FLOAT, d);
  if (d.size() == 3) fr.ndiag = static_cast<int>((d[1] - 1) / 2);
  fr.chi2pix = read_dataset<float>(file, path, "CHI2PIX", H5T_NATIVE_FLOAT, d);
  if (H5Aexists(file, "SPECMIN") > 0) {
    Handle a(H5Aopen(file, "SPECMIN", H5P_DEFAULT), H5Aclose);
    H5Aread(a, H5T_NATIVE_INT, &fr.specmin);
  }
  if (H5Lexists(file, "MODEL", H5P_DEFAULT) > 0) {
    fr.model = read_dataset<float>(file, path, "MODEL", H5T_NATIVE_FLOAT, d);
    fr.model_ny = static_cast<int>(d[0]);
    fr.model_nx = static_cast<int>(d[1]);
  }
  return fr;
}

#else

void write_frame_hdf5(std::string const& path, FrameData const&) {
  throw ParameterError(path + ": this kspecter was built without HDF5 (KSPECTER_ENABLE_HDF5=OFF)");
}
FrameData read_frame_hdf5(std::string const& path) {
  throw ParameterError(path + ": this kspecter was built without HDF5 (KSPECTER_ENABLE_HDF5=OFF)");
}

#endif

}  // namespace kspecter::io
