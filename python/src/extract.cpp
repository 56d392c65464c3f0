// _extract: one frame from arrays in memory through the library's job (the CLI's code path),
// with the GIL released while it runs. kspecter/_extract.py turns gpu_specter's arguments into
// these and this result into gpu_specter's dict.
#include "module.hpp"

#include <kspecter/core/error.hpp>
#include <kspecter/core/log.hpp>
#include <kspecter/parallel/communicator.hpp>
#include <kspecter/parallel/extract_job.hpp>

#include <pybind11/stl.h>

namespace kspecter::python {

namespace {

// The result arrays as numpy arrays that take over the library's vectors (no copies).
py::dict result_dict(extract::FrameResult&& fr) {
  py::ssize_t const ns = fr.nspec, nw = fr.nwave, nd = 2 * fr.ndiag + 1;
  py::dict d;
  d["wave"] = adopt(std::move(fr.wavelength), {nw});
  d["specflux"] = adopt(std::move(fr.flux), {ns, nw});
  d["specivar"] = adopt(std::move(fr.ivar), {ns, nw});
  // gpu_specter's specmask is an int array; kspecter's bits (desispec specmask) fill it.
  d["specmask"] = adopt(std::vector<std::int64_t>(fr.mask.begin(), fr.mask.end()), {ns, nw});
  d["Rdiags"] = adopt(std::move(fr.resolution), {ns, nd, nw});
  d["pixmask_fraction"] = adopt(std::move(fr.pixmask_fraction), {ns, nw});
  d["chi2pix"] = adopt(std::move(fr.chi2pix), {ns, nw});
  if (fr.model.empty())
    d["modelimage"] = py::none();
  else
    d["modelimage"] = adopt(std::move(fr.model), {fr.model_ny, fr.model_nx});
  d["specmin"] = fr.specmin;
  return d;
}

LogLevel log_level(std::string const& name) { return parse_log_level(name); }

py::tuple extract(py::handle image, py::handle ivar, py::handle psf_obj,
                  extract::ExtractOptions const& options, bool psf_grid, py::handle comm_address,
                  py::handle gpu, std::string const& loglevel) {
  ensure_initialized(device_of(image));
  parallel::JobOptions job;
  job.backend = backend_for(gpu);
  job.extract = options;
  job.model = options.model;
  job.desi.psf_grid = psf_grid;  // the PSF's WAVEMIN..WAVEMAX at 0.8 A, as the CLI's -w default
  auto frame = std::make_shared<parallel::MemoryFrame>();
  frame->psf = psf_from(psf_obj);
  BorrowedImage const img = borrow_image(image, "img['image']");
  BorrowedImage const iv = borrow_image(ivar, "img['ivar']");
  frame->image = img.array;
  frame->ivar = iv.array;
  parallel::JobFrame jf;
  jf.memory = frame;
  jf.keep_result = true;
  parallel::Communicator const comm =
      comm_address.is_none() ? parallel::Communicator::self()
                             : parallel::Communicator::borrow(reinterpret_cast<void const*>(
                                   comm_address.cast<std::uintptr_t>()));
  Logger const log(log_level(loglevel), comm.rank() == 0);
  parallel::LogProgress progress(log);

  parallel::JobOutcome out;
  {
    py::gil_scoped_release unlocked;
    out = parallel::run_extract_job(comm, {jf}, job, progress);
  }
  if (!out.ok()) {
    if (out.local_error) std::rethrow_exception(out.local_error);
    throw Error(out.summary.error);  // another rank's failure: every rank raises
  }
  py::dict times;
  for (auto const& e : out.times.entries()) times[py::str(e.stage)] = e.seconds;
  py::object result = py::none();
  if (out.results[0]) result = result_dict(std::move(*out.results[0]));
  return py::make_tuple(result, times);
}

}  // namespace

void bind_extract(py::module_& m) {
  py::class_<extract::ExtractOptions>(m, "_Options")
      .def(py::init<>())
      .def_readwrite("specmin", &extract::ExtractOptions::specmin)
      .def_readwrite("nspec", &extract::ExtractOptions::nspec)
      .def_readwrite("wmin", &extract::ExtractOptions::wmin)
      .def_readwrite("wmax", &extract::ExtractOptions::wmax)
      .def_readwrite("dw", &extract::ExtractOptions::dw)
      .def_readwrite("bundlesize", &extract::ExtractOptions::bundlesize)
      .def_readwrite("nsubbundles", &extract::ExtractOptions::nsubbundles)
      .def_readwrite("nwavestep", &extract::ExtractOptions::nwavestep)
      .def_readwrite("wavepad", &extract::ExtractOptions::wavepad)
      .def_readwrite("wavepad_frac", &extract::ExtractOptions::wavepad_frac)
      .def_readwrite("pixpad_frac", &extract::ExtractOptions::pixpad_frac)
      .def_readwrite("regularize", &extract::ExtractOptions::regularize)
      .def_readwrite("psferr", &extract::ExtractOptions::psferr)
      .def_readwrite("model", &extract::ExtractOptions::model)
      .def_readwrite("memory_budget", &extract::ExtractOptions::memory_budget)
      .def_readwrite("bundles_per_batch", &extract::ExtractOptions::bundles_per_batch);
  m.def("_extract", &extract, py::arg("image"), py::arg("ivar"), py::arg("psf"), py::arg("options"),
        py::arg("psf_grid"), py::arg("comm_address"), py::arg("gpu"), py::arg("loglevel"),
        "One frame through kspecter's job: (result dict or None off the root rank, stage "
        "times). Use kspecter.extract_frame.");
}

}  // namespace kspecter::python
