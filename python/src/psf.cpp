// kspecter.Psf: a GaussHermite PSF held by the library (read from a file, or made from the
// arrays of gpu_specter's read_psf dict), picklable so that mpi4py can broadcast it.
#include "module.hpp"

#include <kspecter/core/error.hpp>
#include <kspecter/io/psf_file.hpp>

#include <pybind11/stl.h>

namespace kspecter::python {

namespace {

// pybind11 holds the PSF by shared_ptr<T>; the library only ever reads it.
using PsfPtr = std::shared_ptr<psf::GaussHermitePsf>;
using F64 = py::array_t<double, py::array::c_style | py::array::forcecast>;

psf::LegendreSet legendre(F64 a, double wmin, double wmax, std::string const& what) {
  if (a.ndim() != 2) throw py::value_error(what + " must be [nfiber][ncoef]");
  psf::LegendreSet s;
  s.wavemin = wmin;
  s.wavemax = wmax;
  s.nfiber = static_cast<int>(a.shape(0));
  s.ncoef = static_cast<int>(a.shape(1));
  s.coeff.assign(a.data(), a.data() + a.size());
  return s;
}

py::array_t<double> coefficients(psf::LegendreSet const& s) {
  return py::array_t<double>({py::ssize_t(s.nfiber), py::ssize_t(s.ncoef)}, s.coeff.data());
}

// Every field, in the order from_arrays takes them (pickling, and what _psf_dict makes).
py::tuple state(psf::GaussHermitePsf const& p) {
  py::ssize_t const npar = py::ssize_t(p.params.size());
  int const ncoef = p.params.empty() ? 0 : p.params[0].ncoef;
  py::array_t<double> coeff({npar, py::ssize_t(p.nfiber), py::ssize_t(ncoef)});
  for (py::ssize_t i = 0; i < npar; ++i)
    std::copy(p.params[i].coeff.begin(), p.params[i].coeff.end(),
              coeff.mutable_data() + i * p.nfiber * ncoef);
  double const wmin = p.params.empty() ? 0 : p.params[0].wavemin;
  double const wmax = p.params.empty() ? 0 : p.params[0].wavemax;
  return py::make_tuple(coefficients(p.xtrace), py::make_tuple(p.xtrace.wavemin, p.xtrace.wavemax),
                        coefficients(p.ytrace), py::make_tuple(p.ytrace.wavemin, p.ytrace.wavemax),
                        p.param_names, coeff, py::make_tuple(wmin, wmax), p.ghdegx, p.ghdegy,
                        p.hsizex, p.hsizey, p.npix_x, p.npix_y, p.fibermin, p.psferr);
}

PsfPtr from_arrays(F64 xtrace, std::pair<double, double> xwave, F64 ytrace,
                   std::pair<double, double> ywave, std::vector<std::string> names, F64 coeff,
                   std::pair<double, double> wave, int ghdegx, int ghdegy, int hsizex, int hsizey,
                   int npix_x, int npix_y, int fibermin, double psferr) {
  auto p = std::make_shared<psf::GaussHermitePsf>();
  p->xtrace = legendre(xtrace, xwave.first, xwave.second, "XTRACE");
  p->ytrace = legendre(ytrace, ywave.first, ywave.second, "YTRACE");
  p->nfiber = p->xtrace.nfiber;
  if (coeff.ndim() != 3 || coeff.shape(0) != py::ssize_t(names.size()) ||
      coeff.shape(1) != p->nfiber)
    throw py::value_error("PSF: COEFF must be [nparam][nfiber][ncoef] with " +
                          std::to_string(names.size()) + " parameters and " +
                          std::to_string(p->nfiber) + " fibers");
  py::ssize_t const ncoef = coeff.shape(2);
  for (std::size_t i = 0; i < names.size(); ++i) {
    psf::LegendreSet s;
    s.wavemin = wave.first;
    s.wavemax = wave.second;
    s.nfiber = p->nfiber;
    s.ncoef = static_cast<int>(ncoef);
    double const* c = coeff.data() + i * p->nfiber * ncoef;
    s.coeff.assign(c, c + p->nfiber * ncoef);
    p->params.push_back(std::move(s));
  }
  p->param_names = std::move(names);
  p->ghdegx = ghdegx;
  p->ghdegy = ghdegy;
  p->hsizex = hsizex;
  p->hsizey = hsizey;
  p->npix_x = npix_x;
  p->npix_y = npix_y;
  p->fibermin = fibermin;
  p->psferr = psferr;
  if (std::string const problem = psf::check_psf(*p); !problem.empty())
    throw ParameterError("PSF: " + problem);
  return p;
}

py::dict meta(psf::GaussHermitePsf const& p) {
  py::dict m;
  m["WAVEMIN"] = p.params.empty() ? p.wavemin() : p.params[0].wavemin;
  m["WAVEMAX"] = p.params.empty() ? p.wavemax() : p.params[0].wavemax;
  m["NPIX_X"] = p.npix_x;
  m["NPIX_Y"] = p.npix_y;
  m["HSIZEX"] = p.hsizex;
  m["HSIZEY"] = p.hsizey;
  m["GHDEGX"] = p.ghdegx;
  m["GHDEGY"] = p.ghdegy;
  m["PSFERR"] = p.psferr;
  m["FIBERMIN"] = p.fibermin;
  m["FIBERMAX"] = p.fibermin + p.nfiber - 1;
  return m;
}

}  // namespace

std::shared_ptr<psf::GaussHermitePsf const> psf_from(py::handle obj) {
  if (py::isinstance<psf::GaussHermitePsf>(obj)) return obj.cast<PsfPtr>();
  py::object const os = py::module_::import("os");
  if (py::isinstance<py::str>(obj) || py::isinstance(obj, os.attr("PathLike")))
    return std::make_shared<psf::GaussHermitePsf>(io::read_psf(fspath(obj)));
  throw py::type_error("psf must be a file name, a kspecter.Psf or gpu_specter's read_psf dict");
}

void bind_psf(py::module_& m) {
  py::class_<psf::GaussHermitePsf, PsfPtr>(m, "Psf",
                                           "A GaussHermite PSF (specex format) held by kspecter.")
      .def_property_readonly("nfiber", [](psf::GaussHermitePsf const& p) { return p.nfiber; })
      .def_property_readonly("npix_x", [](psf::GaussHermitePsf const& p) { return p.npix_x; })
      .def_property_readonly("npix_y", [](psf::GaussHermitePsf const& p) { return p.npix_y; })
      .def_property_readonly("hsizey", [](psf::GaussHermitePsf const& p) { return p.hsizey; })
      .def_property_readonly("psferr", [](psf::GaussHermitePsf const& p) { return p.psferr; })
      .def_property_readonly(
          "wavemin", [](psf::GaussHermitePsf const& p) { return p.wavemin(); },
          "Shortest wavelength where traces and PSF are all valid (Angstrom).")
      .def_property_readonly("wavemax", [](psf::GaussHermitePsf const& p) { return p.wavemax(); })
      .def_property_readonly("meta", &meta,
                             "Header values as gpu_specter's psf['PSF'].meta names them.")
      .def("__repr__",
           [](psf::GaussHermitePsf const& p) {
             return "<kspecter.Psf " + std::to_string(p.nfiber) + " fibers, CCD " +
                    std::to_string(p.npix_x) + " x " + std::to_string(p.npix_y) + ">";
           })
      .def_static("_from_arrays", &from_arrays)
      .def(py::pickle([](psf::GaussHermitePsf const& p) { return state(p); },
                      [](py::tuple t) {
                        if (t.size() != 15) throw py::value_error("bad kspecter.Psf state");
                        auto p =
                            from_arrays(t[0].cast<F64>(), t[1].cast<std::pair<double, double>>(),
                                        t[2].cast<F64>(), t[3].cast<std::pair<double, double>>(),
                                        t[4].cast<std::vector<std::string>>(), t[5].cast<F64>(),
                                        t[6].cast<std::pair<double, double>>(), t[7].cast<int>(),
                                        t[8].cast<int>(), t[9].cast<int>(), t[10].cast<int>(),
                                        t[11].cast<int>(), t[12].cast<int>(), t[13].cast<int>(),
                                        t[14].cast<double>());
                        return p;
                      }));
  m.def(
      "read_psf",
      [](py::object path) -> PsfPtr {
        std::string const p = fspath(path);
        py::gil_scoped_release unlocked;
        return std::make_shared<psf::GaussHermitePsf>(io::read_psf(p));
      },
      py::arg("filename"),
      "Reads a GaussHermite PSF file (specex, PSFVER 3) into a kspecter.Psf; errors name the "
      "file and the HDU.");
}

}  // namespace kspecter::python
