// The warm extractor (extract/extractor.hpp).
#include <kspecter/core/error.hpp>
#include <kspecter/core/version.hpp>
#include <kspecter/extract/bad2dfit.hpp>
#include <kspecter/extract/extractor.hpp>
#include <kspecter/extract/patch_plan.hpp>
#include <kspecter/extract/reject.hpp>

#include <algorithm>
#include <limits>
#include <utility>

namespace kspecter::extract {

void use_psf_grid(ExtractOptions& opt, psf::GaussHermitePsf const& psf) {
  opt.wmin = psf.params.front().wavemin;
  opt.wmax = psf.params.front().wavemax;
  opt.dw = 0.8;
  // The PSF's range at 0.8 A may end up to half a step past the table's WAVEMAX
  // (numpy.arange), and the table's range may exceed the traces' (the r0 PSF of exposure
  // 67784: PSF to 7827 A, XTRACE and YTRACE to 7826 A): desispec extrapolates there.
  opt.range_margin =
      0.5 * opt.dw + std::max({0.0, psf.wavemin() - opt.wmin, opt.wmax - psf.wavemax()});
}

namespace {

// A kept solve covers a frame of one batch (docs/architecture.md, "The warm extractor"). On a
// GPU the Extractor raises the memory budget to hold the whole frame in one batch when that
// batch takes at most half the device's memory: memory traded for the speed of the repeats.
// Batching changes no number, so the frames stay extract_frame's bit for bit.
void one_batch_if_room(ExtractOptions& opt, psf::GaussHermitePsf const& psf) {
  std::size_t const room = runtime_info().device_memory_bytes / 2;  // 0 where unknown
  SpotGeometry const g = spot_geometry(psf);
  int const sy = 2 * g.hsizey + 1, sx = 2 * g.hsizex + 1;
  ExtractOptions whole = opt;
  whole.memory_budget = std::numeric_limits<std::size_t>::max();
  PatchPlan const plan = make_patch_plan(whole, g.nfiber, sy, sx);
  if (plan.batches.size() != 1) return;
  std::size_t const bytes =
      batch_bytes(plan.batches.front(), batch_footprint(plan, opt.bundlesize, sy, sx));
  if (bytes <= room) opt.memory_budget = std::max(opt.memory_budget, bytes);
}

}  // namespace

struct Extractor::State {
  std::string backend;
  std::shared_ptr<psf::GaussHermitePsf const> psf;
  ExtractOptions opt;
  KeptBuffers buffers, psf_tables;
  std::shared_ptr<std::vector<double>> model;
  int model_nx = 0, model_ny = 0;
  int model_x0 = 0, model_x1 = 0;  // the model's non-zero columns (FrameResult::model_x0)

  /// The last model's vector, zeroed, when nothing else holds it and the backend is a host's:
  /// zeroing its columns [model_x0, model_x1) costs far less than a new vector's zeros.
  std::vector<double> recycled_model() {
    std::vector<double> v;
    if (!model || model.use_count() != 1 || !backend_on_host(backend)) return v;
    v = std::move(*model);
    model.reset();
    std::size_t const nx = std::size_t(model_nx), ny = std::size_t(model_ny);
    if (v.size() != nx * ny || model_x1 > model_nx) return {};
    for (std::size_t y = 0; y < ny; ++y)
      std::fill(v.begin() + long(y * nx) + model_x0, v.begin() + long(y * nx) + model_x1, 0.0);
    return v;
  }
};

Extractor::Extractor(std::string backend, std::shared_ptr<psf::GaussHermitePsf const> psf,
                     ExtractOptions opt)
    : state_(std::make_unique<State>()) {
  if (!psf) throw ParameterError("Extractor: no PSF");
  backend = resolved_backend(backend);  // a ParameterError for a backend the build lacks
  opt.validate(psf->nfiber);
  opt.validate_range(psf->wavemin(), psf->wavemax());
  if (!backend_on_host(backend)) one_batch_if_room(opt, *psf);
  state_->backend = std::move(backend);
  state_->psf = std::move(psf);
  state_->opt = opt;
}

Extractor::~Extractor() = default;
Extractor::Extractor(Extractor&&) noexcept = default;
Extractor& Extractor::operator=(Extractor&&) noexcept = default;

FrameResult Extractor::extract(ImageArray const& image, ImageArray const& ivar, StageTimes* times) {
  State& s = *state_;
  ExtractHooks hooks;
  hooks.buffers = &s.buffers;
  hooks.psf_tables = &s.psf_tables;
  hooks.reuse_factor = true;  // one PSF and one set of options for the extractor's life
  ExtractOptions opt = s.opt;
  opt.model = true;
  std::vector<double> recycled = s.recycled_model();
  hooks.model_buffer = &recycled;  // the first pass takes it
  auto const once = [&](ImageArray const& weights, ExtractOptions const& o) {
    return extract_frame(s.backend, *s.psf, image, weights, o, times, hooks);
  };
  FrameResult res = extract_rejecting(once, *s.psf, image, ivar, opt);
  apply_bad2dfit(res);  // desispec's rule, over the whole frame, as the job's writer sets it
  s.model = std::make_shared<std::vector<double>>(std::move(res.model));
  s.model_nx = res.model_nx;
  s.model_ny = res.model_ny;
  s.model_x0 = res.model_x0;
  s.model_x1 = res.model_x1;
  res.model = {};
  res.model_nx = res.model_ny = 0;
  return res;
}

namespace {

// A host vector's bytes into the backend's memory at `dst` (nothing when it is null).
template <class V>
void upload(std::string const& backend, std::vector<V> const& v, V* dst) {
  if (dst) copy_to_backend(backend, dst, v.data(), v.size() * sizeof(V));
}

}  // namespace

FrameResult Extractor::extract(ImageArray const& image, ImageArray const& ivar,
                               FrameOutputs const& out, StageTimes* times) {
  State& s = *state_;
  if (!out.flux || !out.ivar || !out.resolution || !out.chi2pix || !out.pixmask_fraction ||
      !out.mask || !out.model)
    throw ParameterError("Extractor: an output array is missing (only deconvolved_flux may be)");
  if (s.opt.reject_sigma > 0) {
    // Each pass of the rejection reads its model on the host (reject.hpp): the host form's
    // frame, then its arrays to the backend.
    FrameResult res = extract(image, ivar, times);
    upload(s.backend, res.flux, out.flux);
    upload(s.backend, res.ivar, out.ivar);
    upload(s.backend, res.resolution, out.resolution);
    upload(s.backend, res.chi2pix, out.chi2pix);
    upload(s.backend, res.pixmask_fraction, out.pixmask_fraction);
    upload(s.backend, res.mask, out.mask);
    upload(s.backend, res.deconvolved_flux, out.deconvolved_flux);
    upload(s.backend, *s.model, out.model);
    res.flux = {}, res.ivar = {}, res.resolution = {}, res.chi2pix = {};
    res.pixmask_fraction = {}, res.mask = {}, res.deconvolved_flux = {};
    s.model.reset();
    return res;
  }
  ExtractHooks hooks;
  hooks.buffers = &s.buffers;
  hooks.psf_tables = &s.psf_tables;
  hooks.reuse_factor = true;
  hooks.outputs = &out;
  ExtractOptions opt = s.opt;
  opt.model = true;
  opt.bad2dfit_median_factor = bad2dfit_scale;  // desispec's rule, as extract() applies it
  FrameResult res = extract_frame(s.backend, *s.psf, image, ivar, opt, times, hooks);
  s.model.reset();
  s.model_nx = res.model_nx;
  s.model_ny = res.model_ny;
  return res;
}

std::shared_ptr<std::vector<double> const> Extractor::model() const { return state_->model; }
int Extractor::model_nx() const { return state_->model_nx; }
int Extractor::model_ny() const { return state_->model_ny; }

Extractor::Sizes Extractor::sizes() const {
  State const& s = *state_;
  return {s.opt.resolved_nspec(s.psf->nfiber), int(s.opt.wavelengths().size()), s.psf->hsizey,
          s.psf->npix_y, s.psf->npix_x};
}

void Extractor::release() {
  state_->buffers.release();
  state_->psf_tables.release();
}

std::string const& Extractor::backend() const { return state_->backend; }
ExtractOptions const& Extractor::options() const { return state_->opt; }
psf::GaussHermitePsf const& Extractor::psf() const { return *state_->psf; }

}  // namespace kspecter::extract
