// kspecter's file formats from Python: preproc images in, frames and model images out (and
// back in, for checks), through the same io/ functions as the CLI.
#include "module.hpp"

#include <kspecter/core/error.hpp>
#include <kspecter/io/desi_frame.hpp>
#include <kspecter/io/frame_file.hpp>
#include <kspecter/io/gzip_settings.hpp>
#include <kspecter/io/preproc_file.hpp>

#include <pybind11/stl.h>

namespace kspecter::python {

std::string fspath(py::handle p) {
  std::string const s = py::module_::import("os").attr("fspath")(p).cast<std::string>();
  // A C string ends at the first NUL: 'psf.fits\0.bak' would open psf.fits. Python's open()
  // refuses such names the same way.
  if (s.find('\0') != std::string::npos)
    throw py::value_error("embedded null byte in the file name '" + s.substr(0, s.find('\0')) +
                          "\\0...'");
  return s;
}

namespace {

template <class To, class From>
std::vector<To> convert(std::vector<From> const& v) {
  return std::vector<To>(v.begin(), v.end());
}

// A frame dict's array as a flat vector of `T`, checked against the shape it must have.
template <class T>
std::vector<T> flat(py::dict const& frame, char const* key, std::vector<py::ssize_t> const& shape) {
  if (!frame.contains(key)) throw py::key_error(std::string("frame has no '") + key + "'");
  auto a = py::array_t<T, py::array::c_style | py::array::forcecast>::ensure(frame[key]);
  if (!a) throw py::type_error(std::string("frame['") + key + "'] is not a numeric array");
  bool ok = a.ndim() == py::ssize_t(shape.size());
  for (std::size_t i = 0; ok && i < shape.size(); ++i) ok = a.shape(i) == shape[i];
  if (!ok) throw py::value_error(std::string("frame['") + key + "'] has the wrong shape");
  return std::vector<T>(a.data(), a.data() + a.size());
}

// A dict's items as string header records (the CLI writes IN_PSF, IN_IMG, ... as strings).
io::FitsHeader cards(py::handle header) {
  io::FitsHeader c;
  if (header.is_none()) return c;
  for (auto item : py::dict(py::reinterpret_borrow<py::object>(header)))
    c.set_string(py::str(item.first).cast<std::string>(), py::str(item.second).cast<std::string>());
  return c;
}

// A header's keyword values as a dict of strings (string values unquoted).
py::dict header_dict(io::FitsHeader const& h, std::string const& file) {
  py::dict d;
  for (auto const& key : h.keys()) {
    std::string const text = h.value_text(key).value_or("");
    d[py::str(key)] =
        !text.empty() && text.front() == '\'' ? *h.get_string(key, file, "FLUX") : text;
  }
  return d;
}

io::FrameData frame_data(py::dict const& frame, int specmin) {
  auto const flux = py::array::ensure(frame["specflux"]);
  auto const rd = py::array::ensure(frame["Rdiags"]);
  if (!flux || flux.ndim() != 2) throw py::value_error("frame['specflux'] must be 2-D");
  if (!rd || rd.ndim() != 3 || rd.shape(1) % 2 != 1)
    throw py::value_error("frame['Rdiags'] must be [nspec][2 ndiag + 1][nwave]");
  py::ssize_t const ns = flux.shape(0), nw = flux.shape(1), nd = rd.shape(1);
  io::FrameData out;
  out.specmin = specmin;
  out.nspec = static_cast<int>(ns);
  out.nwave = static_cast<int>(nw);
  out.ndiag = static_cast<int>(nd / 2);
  out.wavelength = flat<double>(frame, "wave", {nw});
  // Doubles to float32 as the CLI's frames have them (parallel::frame_data).
  out.flux = convert<float>(flat<double>(frame, "specflux", {ns, nw}));
  out.ivar = convert<float>(flat<double>(frame, "specivar", {ns, nw}));
  out.mask = convert<std::uint32_t>(flat<std::int64_t>(frame, "specmask", {ns, nw}));
  out.resolution = convert<float>(flat<double>(frame, "Rdiags", {ns, nd, nw}));
  out.chi2pix = convert<float>(flat<double>(frame, "chi2pix", {ns, nw}));
  return out;
}

}  // namespace

void bind_files(py::module_& m) {
  m.def(
      "read_image",
      [](py::object path) {
        std::string const p = fspath(path);
        io::PreprocImage img;
        {
          py::gil_scoped_release unlocked;
          img = io::read_preproc(p);
        }
        py::ssize_t const ny = img.ny, nx = img.nx;
        py::dict d;
        d["image"] = adopt(convert<double>(img.image), {ny, nx});
        d["ivar"] = adopt(convert<double>(img.ivar), {ny, nx});
        d["mask"] = adopt(std::move(img.mask), {ny, nx});
        d["has_fibermap"] = img.fibermap.has_value();
        return d;
      },
      py::arg("filename"),
      "Reads a preproc image as gpu_specter's read_img does: a dict with 'image' and 'ivar' "
      "(float64, ivar = 0 where the mask is set or a value is not finite), 'mask' (int32) and "
      "'has_fibermap'.");
  m.def(
      "_write_frame",
      [](py::object path, py::dict frame, int specmin, py::object header, py::object fibermap_from,
         py::object preproc_file, py::object preproc_header, py::object psf, py::object grid,
         bool scores) {
        io::FrameData out = frame_data(frame, specmin);
        auto const extra = header_cards(header);
        std::string const p = fspath(path);
        std::string const fm = fibermap_from.is_none() ? "" : fspath(fibermap_from);
        bool const desi = !preproc_file.is_none() || !preproc_header.is_none() || !psf.is_none();
        DesiFrameInputs in;
        in.preproc_file = preproc_file.is_none() ? "" : fspath(preproc_file);
        in.image_header = header_cards(preproc_header);
        in.fibermap_file = fm;
        in.psf_file = psf.is_none() ? "" : fspath(psf);
        if (!grid.is_none()) {
          auto const g = grid.cast<std::vector<double>>();
          if (g.size() != 3) throw py::value_error("write_frame: grid must be wmin, wmax, dw");
          std::copy(g.begin(), g.end(), in.grid);
        }
        in.scores = scores;
        if (scores) {
          in.flux = flat<double>(frame, "specflux", {out.nspec, out.nwave});
          in.ivar = flat<double>(frame, "specivar", {out.nspec, out.nwave});
        }
        py::gil_scoped_release unlocked;
        if (desi) {
          add_desi_frame_parts(out, in);
        } else {
          // The CLI's FIBERMAP: the file's rows of the frame's spectra (parallel/frame_setup).
          if (!fm.empty())
            out.fibermap = io::frame_fibermap(io::read_fibermap(fm), specmin, out.nspec);
          if (scores) add_scores(out, in.flux, in.ivar);
        }
        set_cards(out.header, extra);
        io::write_frame(p, out);
      },
      py::arg("filename"), py::arg("frame"), py::arg("specmin"), py::arg("header"),
      py::arg("fibermap_from"), py::arg("preproc_file"), py::arg("preproc_header"), py::arg("psf"),
      py::arg("grid"), py::arg("scores"), "kspecter.write_frame's C++ half (kspecter/_frames.py).");
  m.def(
      "write_model",
      [](py::object path, py::dict frame, py::object header) {
        if (!frame.contains("modelimage") || frame["modelimage"].is_none())
          throw py::value_error("frame has no 'modelimage' (extract_frame(..., model=True))");
        auto const a = py::array::ensure(frame["modelimage"]);
        if (!a || a.ndim() != 2) throw py::value_error("frame['modelimage'] must be 2-D");
        py::ssize_t const ny = a.shape(0), nx = a.shape(1);
        auto const model = convert<float>(flat<double>(frame, "modelimage", {ny, nx}));
        io::FitsHeader const c = cards(header);
        std::string const p = fspath(path);
        py::gil_scoped_release unlocked;
        io::write_model_image(p, static_cast<int>(nx), static_cast<int>(ny), model, c);
      },
      py::arg("filename"), py::arg("frame"), py::arg("header") = py::none(),
      "Writes frame['modelimage'] as the CLI's --model does (FITS HDU MODEL, float32).");
  m.def(
      "set_gzip",
      [](int level, int threads) {
        io::set_gzip_settings({level, threads});
      },
      py::arg("level") = io::GzipSettings{}.level, py::arg("threads") = 0,
      "How the .fits.gz files this process writes are compressed, as the CLI's --gzip-level "
      "and --io-threads: ISA-L's level 0 (fastest) to 3 (smallest), on `threads` threads (0: "
      "every CPU this process may use). Raises ParameterError outside those ranges.");
  m.def(
      "read_frame",
      [](py::object path) {
        std::string const p = fspath(path);
        io::FrameData f;
        {
          py::gil_scoped_release unlocked;
          f = io::read_frame(p);
        }
        py::ssize_t const ns = f.nspec, nw = f.nwave, nd = 2 * f.ndiag + 1;
        py::dict d;
        d["specmin"] = f.specmin;
        d["wave"] = adopt(std::move(f.wavelength), {nw});
        d["flux"] = adopt(std::move(f.flux), {ns, nw});
        d["ivar"] = adopt(std::move(f.ivar), {ns, nw});
        d["mask"] = adopt(std::move(f.mask), {ns, nw});
        d["resolution"] = adopt(std::move(f.resolution), {ns, nd, nw});
        d["chi2pix"] = adopt(std::move(f.chi2pix), {ns, nw});
        d["header"] = header_dict(f.header, p);
        return d;
      },
      py::arg("filename"),
      "Reads a frame kspecter wrote: flux, ivar, mask, wave, resolution, chi2pix (as stored), "
      "specmin and the extra header cards.");
}

}  // namespace kspecter::python
