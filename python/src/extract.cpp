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
  if (!fr.rejected.empty() || fr.reject_passes > 0) {
    d["rejected"] = adopt(std::vector<std::int64_t>(fr.rejected.begin(), fr.rejected.end()), {ns});
    d["reject_passes"] = fr.reject_passes;
  }
  return d;
}

py::dict stage_times(StageTimes const& t) {
  py::dict times;
  for (auto const& e : t.entries()) times[py::str(e.stage)] = e.seconds;
  return times;
}

// A read-only numpy array over a shared vector, which it keeps alive (no copy).
py::array_t<double> shared_array(std::shared_ptr<std::vector<double> const> v, py::ssize_t ny,
                                 py::ssize_t nx) {
  auto* held = new std::shared_ptr<std::vector<double> const>(std::move(v));
  py::capsule free_it(
      held, [](void* p) { delete static_cast<std::shared_ptr<std::vector<double> const>*>(p); });
  py::array_t<double> a({ny, nx}, (*held)->data(), free_it);
  a.attr("flags").attr("writeable") = false;
  return a;
}

// kspecter.Extractor's C++ half: an extract::Extractor on the backend `gpu` chooses, with its
// device memory released when Kokkos ends.
std::shared_ptr<extract::Extractor> make_extractor(py::handle psf_obj,
                                                   extract::ExtractOptions options, bool psf_grid,
                                                   py::handle gpu) {
  ensure_initialized();
  auto psf = psf_from(psf_obj);
  if (psf_grid) extract::use_psf_grid(options, *psf);
  auto e = std::make_shared<extract::Extractor>(backend_for(gpu), std::move(psf), options);
  release_before_finalize(e);
  return e;
}

// What the extraction reused (Extractor.last_reuse).
py::dict reuse_of(extract::FrameResult const& fr) {
  py::dict reuse;
  reuse["factor_reused"] = fr.stats.reused_factor;
  reuse["patches"] = fr.stats.npatch;
  reuse["patches_reworked"] = fr.stats.nreworked;
  return reuse;
}

// `timed`: the stage times asked for. They fence the backend between stages, which undoes the
// overlap of the quality stage's kernels with the decorrelation's; so not unless asked.
py::tuple extractor_extract(extract::Extractor& e, py::handle image, py::handle ivar, bool timed) {
  ensure_initialized(device_of(image));
  BorrowedImage const img = borrow_image(image, "img['image']");
  BorrowedImage const iv = borrow_image(ivar, "img['ivar']");
  StageTimes times;
  extract::FrameResult fr;
  {
    py::gil_scoped_release unlocked;
    fr = e.extract(img.array, iv.array, timed ? &times : nullptr);
  }
  py::dict const reuse = reuse_of(fr);
  return py::make_tuple(result_dict(std::move(fr)), stage_times(times), reuse);
}

// One frame into the caller's arrays (Extractor.extract with results in the backend's memory):
// `outputs` holds specflux, specivar, Rdiags, pixmask_fraction, chi2pix, specmask (uint32) and
// modelimage, of the frame's shapes, where the backend reads them (cupy arrays on the GPU,
// numpy arrays on a host backend). Returns (the rest of the result dict, stage times, reuse).
py::tuple extractor_extract_into(extract::Extractor& e, py::handle image, py::handle ivar,
                                 py::dict const& outputs, bool timed) {
  ensure_initialized(device_of(image));
  extract::Extractor::Sizes const z = e.sizes();
  bool const on_device = !extract::backend_on_host(e.backend());
  auto out_of = [&](char const* key, char const* type, std::vector<py::ssize_t> const& shape) {
    if (!outputs.contains(key)) throw py::value_error(std::string("outputs lack '") + key + "'");
    return output_array(outputs[key], std::string("outputs['") + key + "']", type, shape,
                        on_device);
  };
  py::ssize_t const ns = z.nspec, nw = z.nwave, nd = 2 * z.ndiag + 1;
  extract::FrameOutputs out;
  out.flux = static_cast<double*>(out_of("specflux", "<f8", {ns, nw}));
  out.ivar = static_cast<double*>(out_of("specivar", "<f8", {ns, nw}));
  out.resolution = static_cast<double*>(out_of("Rdiags", "<f8", {ns, nd, nw}));
  out.pixmask_fraction = static_cast<double*>(out_of("pixmask_fraction", "<f8", {ns, nw}));
  out.chi2pix = static_cast<double*>(out_of("chi2pix", "<f8", {ns, nw}));
  out.mask = static_cast<std::uint32_t*>(out_of("specmask", "<u4", {ns, nw}));
  out.model = static_cast<double*>(out_of("modelimage", "<f8", {z.ny, z.nx}));
  BorrowedImage const img = borrow_image(image, "img['image']");
  BorrowedImage const iv = borrow_image(ivar, "img['ivar']");
  StageTimes times;
  extract::FrameResult fr;
  {
    py::gil_scoped_release unlocked;
    fr = e.extract(img.array, iv.array, out, timed ? &times : nullptr);
  }
  py::dict meta;
  meta["wave"] = adopt(std::move(fr.wavelength), {nw});
  meta["specmin"] = fr.specmin;
  if (!fr.rejected.empty() || fr.reject_passes > 0) {
    meta["rejected"] =
        adopt(std::vector<std::int64_t>(fr.rejected.begin(), fr.rejected.end()), {ns});
    meta["reject_passes"] = fr.reject_passes;
  }
  return py::make_tuple(meta, stage_times(times), reuse_of(fr));
}

py::object extractor_model(extract::Extractor const& e) {
  if (!e.model()) return py::none();
  return shared_array(e.model(), e.model_ny(), e.model_nx());
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
  py::dict const times = stage_times(out.times);
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
      .def_readwrite("bundles_per_batch", &extract::ExtractOptions::bundles_per_batch)
      .def_readwrite("reject_sigma", &extract::ExtractOptions::reject_sigma)
      .def_readwrite("reject_iter", &extract::ExtractOptions::reject_iter);
  py::class_<extract::Extractor, std::shared_ptr<extract::Extractor>>(m, "_Extractor")
      .def(py::init(&make_extractor), py::arg("psf"), py::arg("options"), py::arg("psf_grid"),
           py::arg("gpu"))
      .def("extract", &extractor_extract, py::arg("image"), py::arg("ivar"),
           py::arg("timed") = false,
           "(result dict, stage times, reuse dict) of one frame; use kspecter.Extractor.extract")
      .def("extract_into", &extractor_extract_into, py::arg("image"), py::arg("ivar"),
           py::arg("outputs"), py::arg("timed") = false,
           "(result dict less the arrays, stage times, reuse dict) of one frame written into "
           "`outputs`; use kspecter.Extractor.extract(results='device')")
      .def_property_readonly(
          "on_host",
          [](extract::Extractor const& e) { return extract::backend_on_host(e.backend()); })
      .def_property_readonly("sizes",
                             [](extract::Extractor const& e) {
                               auto const z = e.sizes();
                               return py::make_tuple(z.nspec, z.nwave, z.ndiag, z.ny, z.nx);
                             })
      .def("model", &extractor_model, "the last extraction's model image (read-only), or None")
      .def("release", &extract::Extractor::release, "frees the device memory it keeps")
      .def_property_readonly("backend", &extract::Extractor::backend);
  m.def("_extract", &extract, py::arg("image"), py::arg("ivar"), py::arg("psf"), py::arg("options"),
        py::arg("psf_grid"), py::arg("comm_address"), py::arg("gpu"), py::arg("loglevel"),
        "One frame through kspecter's job: (result dict or None off the root rank, stage "
        "times). Use kspecter.extract_frame.");
}

}  // namespace kspecter::python
