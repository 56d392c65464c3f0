// What `kspecter extract` puts into a frame besides the spectra, for write_frame(preproc=...):
// desispec's FLUX header (the preproc's IMAGE header and the extraction's keywords), the
// FIBERMAP rows of the frame's spectra, and SCORES; the same io/ and extract/ functions as the
// CLI (parallel::detail::setup_frame and write_frame_outputs).
#include "module.hpp"

#include <kspecter/core/error.hpp>
#include <kspecter/extract/frame_scores.hpp>
#include <kspecter/io/desi_frame.hpp>
#include <kspecter/io/preproc_file.hpp>
#include <kspecter/io/psf_file.hpp>

#include <algorithm>

namespace kspecter::python {

std::vector<HeaderCard> header_cards(py::handle header) {
  std::vector<HeaderCard> cards;
  if (header.is_none()) return cards;
  for (auto item : py::dict(py::reinterpret_borrow<py::object>(header))) {
    HeaderCard c;
    c.key = py::str(item.first).cast<std::string>();
    py::handle const v = item.second;
    std::string const type = py::type::of(v).attr("__name__").cast<std::string>();
    if (py::isinstance<py::bool_>(v) || type == "bool_") {  // numpy.bool_ is no Python bool
      c.kind = HeaderCard::Kind::logical;
      c.logical = py::bool_(py::reinterpret_borrow<py::object>(v));
    } else if (py::isinstance<py::int_>(v) || py::hasattr(v, "__index__")) {
      c.kind = HeaderCard::Kind::integer;
      c.integer = py::int_(py::reinterpret_borrow<py::object>(v)).cast<long long>();
    } else if (py::isinstance<py::float_>(v) || type.rfind("float", 0) == 0) {
      c.kind = HeaderCard::Kind::number;
      c.number = py::float_(py::reinterpret_borrow<py::object>(v)).cast<double>();
    } else {
      c.text = py::str(v).cast<std::string>();
    }
    cards.push_back(std::move(c));
  }
  return cards;
}

void set_cards(io::FitsHeader& header, std::vector<HeaderCard> const& cards) {
  for (auto const& c : cards) switch (c.kind) {
      case HeaderCard::Kind::logical: header.set_logical(c.key, c.logical); break;
      case HeaderCard::Kind::integer: header.set_integer(c.key, c.integer); break;
      case HeaderCard::Kind::number: header.set_number(c.key, c.number); break;
      case HeaderCard::Kind::string: header.set_string(c.key, c.text); break;
    }
}

void add_desi_frame_parts(io::FrameData& out, DesiFrameInputs const& in) {
  io::FitsHeader image_header;
  set_cards(image_header, in.image_header);
  std::optional<io::FitsTable> fibermap;
  if (!in.fibermap_file.empty()) fibermap = io::read_fibermap(in.fibermap_file);
  if (!in.preproc_file.empty()) {
    io::PreprocImage img = io::read_preproc(in.preproc_file);
    image_header = std::move(img.header);
    if (!fibermap) fibermap = std::move(img.fibermap);
  }
  io::FrameProvenance p;
  p.nspec = out.nspec;
  p.wavemin = in.grid[0];
  p.wavemax = in.grid[1];
  p.wavestep = in.grid[2];
  p.image = in.preproc_file;
  long long first_fiber = out.specmin;
  if (!in.psf_file.empty()) {
    io::PsfKeywords keywords;
    auto const psf = io::read_psf(in.psf_file, &keywords);
    p.psf = in.psf_file;
    p.orig_psf = keywords.in_psf;
    first_fiber += psf.fibermin;
  }
  out.fibermap = fibermap ? io::frame_fibermap(*fibermap, out.specmin, out.nspec)
                          : io::fiber_numbers_fibermap(first_fiber, out.nspec);
  auto const fibers = io::integer_column(*out.fibermap, "FIBER");
  p.fibermin = fibers->empty() ? 0 : *std::min_element(fibers->begin(), fibers->end());
  out.header = io::desi_frame_header(image_header, p);
  if (in.scores) add_scores(out, in.flux, in.ivar);
}

void add_scores(io::FrameData& out, std::vector<double> const& flux,
                std::vector<double> const& ivar) {
  for (auto& c : extract::frame_scores(out.wavelength, flux, ivar, out.nspec))
    out.scores.push_back({c.name, c.comment, std::move(c.values)});
}

}  // namespace kspecter::python
