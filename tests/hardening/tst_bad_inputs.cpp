// The bad-input corpus of `kspecter extract`: each broken input is made here from a good
// one (CFITSIO and the library's writers, no checked-in binaries) and has one expected
// outcome, asserted:
//   refused   exit status 1 or 2 (never a signal), a message naming the file, the HDU and the
//             problem, and the output path untouched (the previous file, byte for byte, and
//             no temporary left); these runs go several at a time at the end of each test;
//   masked    a valid frame: no NaN or Inf in FLUX, IVAR, RESOLUTION or CHI2PIX, IVAR >= 0,
//             and IVAR = 0 with ALLBADPIX on every bin whose spot lies in the missing data,
//             IVAR > 0 without it on bins whose spots lie well away from it (pixels near
//             the float limit: IVAR = 0 with BAD2DFIT where the fluxes overflow float32).
#include "child_process.hpp"
#include "fits_edit.hpp"
#include "frame_checks.hpp"
#include "small_inputs.hpp"

#include <kspecter/extract/mask_bits.hpp>
#include <kspecter/io/frame_file.hpp>
#include <kspecter/io/preproc_file.hpp>
#include <kspecter/io/psf_file.hpp>

#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace {

using namespace kspecter::test;
namespace fe = kspecter::test::fits_edit;
namespace specmask = kspecter::extract::specmask;
using kspecter::io::FrameData;

constexpr double nan_v = std::numeric_limits<double>::quiet_NaN();
constexpr double inf_v = std::numeric_limits<double>::infinity();

// Index of bin `w` of spectrum `s` (counted from the frame's first) in FLUX, IVAR and MASK.
std::size_t bin_index(FrameData const& fr, int s, int w) {
  return std::size_t(s) * fr.nwave + std::size_t(w);
}

class BadInputs : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(make_small_inputs(in));
    out = in.dir + "/frame.fits";
    // A previous output at the path: a failed run must leave it as it is.
    FrameData prev;
    prev.nspec = 1;
    prev.nwave = 2;
    prev.wavelength = {6000, 6001};
    prev.flux = prev.ivar = prev.chi2pix = {1, 2};
    prev.mask = {0, 0};
    prev.resolution = {0, 1};
    kspecter::io::write_frame(out, prev);
    previous = file_bytes(out);
  }

  std::string path(std::string const& name) const { return in.dir + "/" + name; }

  // Expects `kspecter <args>` to be refused, naming `file`, HDU `hdu` (none when empty) and
  // every one of `words`. The runs wait for the end of the test and then go several at a
  // time (most of a refused run is MPI start-up, spent waiting), each writing to its own
  // copy of the previous output.
  void expect_refused(std::string const& args, std::string const& file, std::string const& hdu,
                      std::vector<std::string> const& words) {
    refusals.push_back({args, file, hdu, words});
  }
  // Runs `kspecter <args[k]>` with its output redirected to `outputs[k]`, several at a time
  // (a small run spends most of its time waiting for MPI to start), and hands each finished
  // run to `check(k, child)`.
  void run_concurrently(std::vector<std::string> const& args,
                        std::vector<std::string> const& outputs,
                        std::function<void(std::size_t, ChildProcess&)> const& check) {
    std::size_t const at_once = 4;
    for (std::size_t first = 0; first < args.size(); first += at_once) {
      std::size_t const last = std::min(args.size(), first + at_once);
      std::vector<std::unique_ptr<ChildProcess>> running;
      for (std::size_t k = first; k < last; ++k) {
        std::string a = args[k];
        std::string const flag = " -o " + out;
        if (auto const at = a.find(flag); at != std::string::npos)
          a.replace(at, flag.size(), " -o " + outputs[k]);
        running.push_back(std::make_unique<ChildProcess>(kspecter_argv(a), outputs[k] + ".log"));
      }
      for (std::size_t k = first; k < last; ++k) {
        running[k - first]->wait();
        SCOPED_TRACE(args[k]);
        check(k, *running[k - first]);
      }
    }
  }

  void TearDown() override {
    std::vector<std::string> args, outputs;
    for (std::size_t k = 0; k < refusals.size(); ++k) {
      args.push_back(refusals[k].args);
      outputs.push_back(path("refused_" + std::to_string(k) + ".fits"));
      std::ofstream(outputs.back(), std::ios::binary) << previous;
    }
    run_concurrently(args, outputs, [&](std::size_t k, ChildProcess& child) {
      Refusal const& c = refusals[k];
      std::string const msg = child.output();
      EXPECT_TRUE(child.exited() && (child.exit_code() == 1 || child.exit_code() == 2))
          << "exit " << child.exit_code() << ", signal " << child.term_signal() << ": " << msg;
      EXPECT_NE(msg.find("error"), std::string::npos) << msg;
      if (!c.file.empty())
        EXPECT_NE(msg.find(c.file), std::string::npos) << "file not named: " << msg;
      if (!c.hdu.empty())
        EXPECT_NE(msg.find("'" + c.hdu + "'"), std::string::npos) << "HDU not named: " << msg;
      for (auto const& w : c.words)
        EXPECT_NE(msg.find(w), std::string::npos) << "'" << w << "' not said: " << msg;
      EXPECT_EQ(msg.find("Traceback"), std::string::npos) << msg;
      EXPECT_TRUE(file_bytes(outputs[k]) == previous) << "the previous output was changed";
    });
    EXPECT_TRUE(temp_files(in.dir).empty()) << temp_files(in.dir).front();
  }

  // `kspecter extract` of the good inputs into `out`, small layout, quiet, without a
  // wavelength grid: ends in a space, for the grid and the options under test.
  std::string args_without_grid() const {
    return "extract -i " + in.image + " -p " + in.psf + " -o " + out + " " + small_layout +
           " --log-level quiet --no-truth ";
  }

  void expect_refused_input(std::string const& image, std::string const& psf,
                            std::string const& file, std::string const& hdu,
                            std::vector<std::string> const& words) {
    expect_refused(extract_args(image, psf, out), file, hdu, words);
  }

  // `kspecter extract` of the good inputs with each (extra arguments, word of the message).
  void expect_options_refused(std::vector<std::pair<std::string, std::string>> const& cases);

  // Runs the extractions (each to its own output, several at a time) and returns the frames
  // they wrote, checked clean (an empty frame for a run that failed).
  std::vector<FrameData> expect_frames(std::vector<std::string> const& args) {
    std::vector<std::string> outputs;
    for (std::size_t k = 0; k < args.size(); ++k)
      outputs.push_back(path("frame_" + std::to_string(k) + ".fits"));
    std::vector<FrameData> frames(args.size());
    run_concurrently(args, outputs, [&](std::size_t k, ChildProcess& child) {
      EXPECT_TRUE(child.exited() && child.exit_code() == 0) << child.output();
      if (!child.exited() || child.exit_code() != 0) return;
      frames[k] = kspecter::io::read_frame(outputs[k]);
      EXPECT_TRUE(clean_frame(frames[k]));
    });
    EXPECT_TRUE(temp_files(in.dir).empty());
    return frames;
  }
  FrameData expect_frame(std::string const& args) { return expect_frames({args}).front(); }

  // Bins of `fr` whose spots lie fully inside rows [y0, y1) of the CCD must be lost
  // (IVAR = 0, ALLBADPIX); bins whose spots are `margin` rows or more away must be intact.
  // Returns the number of lost bins.
  int expect_band_lost(FrameData const& fr, int y0, int y1, int margin = 3) {
    int lost = 0, kept = 0;
    for (int s = 0; s < fr.nspec; ++s)
      for (int w = 0; w < fr.nwave; ++w) {
        auto const [lo, hi] = spot_rows(fr.specmin + s, fr.wavelength[std::size_t(w)]);
        std::size_t const i = bin_index(fr, s, w);
        if (lo >= y0 && hi < y1) {
          ++lost;
          EXPECT_EQ(fr.ivar[i], 0.0f) << "spectrum " << s << ", bin " << w;
          EXPECT_TRUE(fr.mask[i] & specmask::ALLBADPIX) << "spectrum " << s << ", bin " << w;
        } else if (hi + margin < y0 || lo - margin >= y1) {
          ++kept;
          EXPECT_GT(fr.ivar[i], 0.0f) << "spectrum " << s << ", bin " << w;
          EXPECT_FALSE(fr.mask[i] & specmask::ALLBADPIX) << "spectrum " << s << ", bin " << w;
        }
      }
    EXPECT_GT(kept, 0);
    return lost;
  }

  // The good PSF, read once per test, on first use.
  kspecter::psf::GaussHermitePsf const& good_psf() {
    if (!psf_) psf_ = kspecter::io::read_psf(in.psf);
    return *psf_;
  }

  // The rows (lo, hi) that the spot of spectrum `spec` at wavelength `wl` of the good PSF
  // reaches: its trace's y minus and plus (HSIZEY + 1).
  std::pair<double, double> spot_rows(int spec, double wl) {
    auto const& psf = good_psf();
    double const y = psf.ytrace.value(spec, wl);
    return {y - psf.hsizey - 1, y + psf.hsizey + 1};
  }

  // A copy of the image with rows [y0, y1) of HDU `hdu` set to `value`, written with BITPIX
  // `bitpix` (0: the HDU's own).
  std::string image_with_band(std::string const& name, std::string const& hdu, int y0, int y1,
                              double value, int bitpix = 0) {
    std::string const p = path(name);
    fe::edit_image(
        in.image, p, hdu,
        [&](std::vector<double>& v, std::vector<long> const& ax) {
          for (long y = y0; y < y1; ++y)
            for (long x = 0; x < ax[0]; ++x) v[std::size_t(y * ax[0] + x)] = value;
        },
        bitpix);
    return p;
  }

  struct Refusal {
    std::string args, file, hdu;
    std::vector<std::string> words;
  };
  SmallInputs in;
  std::string out, previous;
  std::vector<Refusal> refusals;
  std::optional<kspecter::psf::GaussHermitePsf> psf_;  // see good_psf()
};

// ---------------------------------------------------------------------------------- refused

TEST_F(BadInputs, truncated_files_are_refused) {
  auto const [ivar0, ivar1] = fe::hdu_extent(in.image, "IVAR");
  fe::truncate_copy(in.image, path("cut_image.fits"), std::size_t((ivar0 + ivar1) / 2));
  expect_refused_input(path("cut_image.fits"), in.psf, path("cut_image.fits"), "IVAR",
                       {"truncated"});
  // Cut inside the PSF table: its rows cannot all be read.
  auto const [psf0, psf1] = fe::hdu_extent(in.psf, "PSF");
  fe::truncate_copy(in.psf, path("cut_psf.fits"), std::size_t((psf0 + psf1) / 2 + 2880));
  expect_refused_input(in.image, path("cut_psf.fits"), path("cut_psf.fits"), "PSF", {"truncated"});
  // Only the primary header survives.
  fe::truncate_copy(in.image, path("header_only.fits"), 2880);
  expect_refused_input(path("header_only.fits"), in.psf, path("header_only.fits"), "IMAGE",
                       {"truncated"});
  // Not FITS at all, and empty.
  std::ofstream(path("text.fits")) << std::string(4000, 'x');
  expect_refused_input(path("text.fits"), in.psf, path("text.fits"), "", {"not a readable FITS"});
  std::ofstream(path("empty.fits")).close();
  expect_refused_input(in.image, path("empty.fits"), path("empty.fits"), "", {"cannot open"});
}

// The paths of a preproc file as desispec writes it: the whole file gzipped, MASK
// tile-compressed, a FIBERMAP, the exposure's keywords.
TEST_F(BadInputs, desi_layout_corruptions) {
  // Corrupted compressed tiles: bytes in the middle of MASK's heap overwritten.
  {
    auto const [m0, m1] = fe::hdu_extent(in.image, "MASK");
    std::string bytes = file_bytes(in.image);
    std::size_t const mid = std::size_t((m0 + 2880 + m1) / 2);
    for (std::size_t i = 0; i < 512; ++i) bytes[mid + i] = char(0xA5 ^ (i * 37));
    std::ofstream(path("mask_tiles.fits"), std::ios::binary) << bytes;
  }
  expect_refused_input(path("mask_tiles.fits"), in.psf, path("mask_tiles.fits"), "MASK",
                       {"DATASUM", "corrupt"});
  // The same without checksums (a writer that sets none): the decompression itself fails.
  fe::patch_card(path("mask_tiles.fits"), path("mask_tiles_nosum.tmp"), "MASK", "DATASUM",
                 "COMMENT no DATASUM");
  fe::patch_card(path("mask_tiles_nosum.tmp"), path("mask_tiles_nosum.fits"), "MASK", "CHECKSUM",
                 "COMMENT no CHECKSUM");
  std::filesystem::remove(path("mask_tiles_nosum.tmp"));
  expect_refused_input(path("mask_tiles_nosum.fits"), in.psf, path("mask_tiles_nosum.fits"), "MASK",
                       {"cannot read pixels"});
  // The whole file gzipped (as kspecter simulate writes .gz), then cut in half: the gzip
  // stream ends early.
  ASSERT_EQ(run_kspecter("simulate -p " + in.psf + " -o " + path("pre.fits.gz") + " " + small_grid +
                         " --seed 3")
                .status,
            0);
  fe::truncate_copy(path("pre.fits.gz"), path("cut.fits.gz"),
                    std::filesystem::file_size(path("pre.fits.gz")) / 2);
  expect_refused_input(path("cut.fits.gz"), in.psf, path("cut.fits.gz"), "", {"gzip"});
  // A gzip file that is not FITS (a gzipped text).
  {
    gzFile g = gzopen(path("text.fits.gz").c_str(), "wb");
    ASSERT_NE(g, nullptr);
    std::string const text(5000, 'x');
    gzwrite(g, text.data(), unsigned(text.size()));
    gzclose(g);
  }
  expect_refused_input(path("text.fits.gz"), in.psf, path("text.fits.gz"), "",
                       {"not a readable FITS"});
  // A FIBERMAP of the wrong length: the image's has 5 rows for the 20 spectra extracted.
  ASSERT_EQ(run_kspecter("simulate -p " + in.psf + " -o " + path("five.fits") + " " + small_grid +
                         " -n 5 --seed 3")
                .status,
            0);
  expect_refused_input(path("five.fits"), in.psf, path("five.fits"), "FIBERMAP", {"has 5 rows"});
  // Header keywords of the wrong type, where the barycentric correction reads them.
  std::string const bary = " --barycentric-correction";
  fe::patch_card(in.image, path("ra_text.fits"), "IMAGE", "TARGTRA",
                 "TARGTRA = 'ten hours'          / target RA [deg]");
  expect_refused(extract_args(path("ra_text.fits"), in.psf, out) + bary, path("ra_text.fits"),
                 "IMAGE", {"TARGTRA", "not a finite number"});
  fe::patch_card(in.image, path("mjd_logical.fits"), "IMAGE", "MJD-OBS",
                 "MJD-OBS =                    T / MJD at the start of the exposure");
  expect_refused(extract_args(path("mjd_logical.fits"), in.psf, out) + bary,
                 path("mjd_logical.fits"), "IMAGE", {"MJD-OBS", "not a finite number"});
  fe::patch_card(in.image, path("exptime_text.fits"), "IMAGE", "EXPTIME",
                 "EXPTIME = '900s'               / exposure time [s]");
  expect_refused(extract_args(path("exptime_text.fits"), in.psf, out) + bary,
                 path("exptime_text.fits"), "IMAGE", {"EXPTIME", "not a finite number"});
  // A declination beyond the pole: a number, but not a pointing.
  fe::patch_card(in.image, path("dec_99.fits"), "IMAGE", "TARGTDEC",
                 "TARGTDEC=                 99.0 / target Dec [deg]");
  expect_refused(extract_args(path("dec_99.fits"), in.psf, out) + bary, path("dec_99.fits"),
                 "IMAGE", {"TARGTDEC"});
}

TEST_F(BadInputs, wrong_bitpix) {
  // A floating-point MASK: the reader wants integer bits.
  fe::edit_image(
      in.image, path("mask_f4.fits"), "MASK", [](auto&, auto const&) {}, FLOAT_IMG);
  expect_refused_input(path("mask_f4.fits"), in.psf, path("mask_f4.fits"), "MASK",
                       {"integer", "BITPIX"});
  // A BITPIX FITS does not define: the HDU cannot be read at all.
  fe::patch_card(in.image, path("bitpix_12.fits"), "IVAR", "BITPIX",
                 "BITPIX  =                   12 / not a FITS type");
  expect_refused_input(path("bitpix_12.fits"), in.psf, path("bitpix_12.fits"), "IVAR", {"corrupt"});
  // An integer IMAGE (rounded electrons) is a valid image: any BITPIX is read as numbers.
  fe::edit_image(
      in.image, path("image_i4.fits"), "IMAGE",
      [](std::vector<double>& v, auto const&) {
        for (double& x : v) x = std::round(x);
      },
      LONG_IMG);
  FrameData const fr = expect_frame(extract_args(path("image_i4.fits"), in.psf, out));
  int good = 0;
  for (float v : fr.ivar) good += v > 0;
  EXPECT_EQ(good, int(fr.ivar.size()));
}

TEST_F(BadInputs, missing_or_misnamed_hdus) {
  fe::rename_hdu(in.image, path("ivar_renamed.fits"), "IVAR", "IVR");
  expect_refused_input(path("ivar_renamed.fits"), in.psf, path("ivar_renamed.fits"), "IVAR",
                       {"not found"});
  fe::drop_hdu(in.image, path("no_mask.fits"), "MASK");
  expect_refused_input(path("no_mask.fits"), in.psf, path("no_mask.fits"), "MASK", {"not found"});
  fe::rename_hdu(in.psf, path("ytrace_renamed.fits"), "YTRACE", "Y_TRACE");
  expect_refused_input(in.image, path("ytrace_renamed.fits"), path("ytrace_renamed.fits"), "YTRACE",
                       {"missing"});
  fe::drop_hdu(in.psf, path("no_table.fits"), "PSF");
  expect_refused_input(in.image, path("no_table.fits"), path("no_table.fits"), "PSF", {"missing"});
  // Image and PSF swapped on the command line: the PSF is read first.
  expect_refused_input(in.psf, in.image, in.image, "XTRACE", {"missing"});
  expect_refused(extract_args(path("nowhere.fits"), in.psf, out), path("nowhere.fits"), "",
                 {"not found"});
}

TEST_F(BadInputs, wrong_shapes_and_zero_sized_hdus) {
  fe::replace_image(in.image, path("ivar_short.fits"), "IVAR", FLOAT_IMG, {200, 399},
                    std::vector<double>(200 * 399, 1.0));
  expect_refused_input(path("ivar_short.fits"), in.psf, path("ivar_short.fits"), "IVAR",
                       {"does not match"});
  fe::replace_image(in.image, path("mask_transposed.fits"), "MASK", LONG_IMG, {400, 200},
                    std::vector<double>(400 * 200, 0.0));
  expect_refused_input(path("mask_transposed.fits"), in.psf, path("mask_transposed.fits"), "MASK",
                       {"does not match"});
  fe::replace_image(in.image, path("image_3d.fits"), "IMAGE", FLOAT_IMG, {200, 400, 2},
                    std::vector<double>(200 * 400 * 2, 1.0));
  expect_refused_input(path("image_3d.fits"), in.psf, path("image_3d.fits"), "IMAGE", {"2-D"});
  // Zero-sized HDUs: no axes, and an axis of length 0.
  fe::replace_image(in.image, path("image_empty.fits"), "IMAGE", FLOAT_IMG, {}, {});
  expect_refused_input(path("image_empty.fits"), in.psf, path("image_empty.fits"), "IMAGE",
                       {"2-D"});
  fe::replace_image(in.image, path("ivar_zero_rows.fits"), "IVAR", FLOAT_IMG, {200, 0}, {});
  expect_refused_input(path("ivar_zero_rows.fits"), in.psf, path("ivar_zero_rows.fits"), "IVAR",
                       {"does not match"});
  fe::replace_image(in.psf, path("xtrace_empty.fits"), "XTRACE", DOUBLE_IMG, {6, 0}, {});
  expect_refused_input(in.image, path("xtrace_empty.fits"), path("xtrace_empty.fits"), "XTRACE",
                       {"empty"});
  // XTRACE for 19 fibers while YTRACE and the table describe 20.
  {
    std::vector<long> ax;
    auto v = fe::read_image(in.psf, "XTRACE", &ax);
    v.resize(std::size_t(ax[0]) * 19);
    fe::replace_image(in.psf, path("xtrace_19.fits"), "XTRACE", DOUBLE_IMG, {ax[0], 19}, v);
  }
  expect_refused_input(in.image, path("xtrace_19.fits"), path("xtrace_19.fits"), "YTRACE",
                       {"has 20 fibers but XTRACE has 19"});
}

TEST_F(BadInputs, image_and_psf_of_different_ccds) {
  auto r = run_kspecter("make-psf -o " + path("tall_psf.fits") +
                        " --nfiber 20 --ccd 200,420 -w 6000,6200");
  ASSERT_EQ(r.status, 0) << r.out;
  expect_refused_input(in.image, path("tall_psf.fits"), in.image, "IMAGE",
                       {path("tall_psf.fits"), "200 x 400", "200 x 420"});
}

TEST_F(BadInputs, non_finite_psf_coefficients_are_refused) {
  fe::set_table_value(in.psf, path("coeff_nan.fits"), "PSF", "COEFF", 3, 5, nan_v);
  expect_refused_input(in.image, path("coeff_nan.fits"), path("coeff_nan.fits"), "PSF",
                       {"not finite"});
  fe::edit_image(in.psf, path("xtrace_inf.fits"), "XTRACE",
                 [](std::vector<double>& v, auto const&) { v[7] = inf_v; });
  expect_refused_input(in.image, path("xtrace_inf.fits"), path("xtrace_inf.fits"), "XTRACE",
                       {"not finite"});
  fe::edit_image(in.psf, path("ytrace_nan.fits"), "YTRACE",
                 [](std::vector<double>& v, auto const&) { v[0] = nan_v; });
  expect_refused_input(in.image, path("ytrace_nan.fits"), path("ytrace_nan.fits"), "YTRACE",
                       {"not finite"});
}

TEST_F(BadInputs, wavelength_grid_outside_the_psf) {
  std::string const base = args_without_grid();
  expect_refused(base + "-w 5000,5100,0.8", in.psf, "", {"outside the PSF's range 6000 .. 6200 A"});
  expect_refused(base + "-w 5990,6100,0.8", in.psf, "", {"outside the PSF"});  // partly
  expect_refused(base + "-w 6100,6300,0.8", in.psf, "", {"outside the PSF"});
  // The grid up to the PSF's very edges is fine: the padding beyond them is extrapolated.
  FrameData const fr = expect_frame(base + "-w 6000,6200,0.8");
  EXPECT_EQ(fr.nwave, 251);
}

// Each refused with a message naming the option, before anything is written.
void BadInputs::expect_options_refused(
    std::vector<std::pair<std::string, std::string>> const& cases) {
  std::string const base = args_without_grid();
  for (auto const& [args, words] : cases) expect_refused(base + args, "", "", {words});
}

TEST_F(BadInputs, absurd_wavelength_grids) {
  expect_options_refused({
      {"-w 6020,6180,0", "dw"},
      {"-w 6020,6180,-0.8", "dw"},
      {"-w 6020,6180,1e-12", "bins"},
      {"-w 0,1e300,1", "bins"},
      {"-w 6180,6020,0.8", "wmax"},
      {"-w nan,6180,0.8", "finite"},
      {"-w 6020,inf,0.8", "finite"},
      {"-w 6020,6180", "wavelength"},
      {"-w abc", "wavelength"},
      {small_grid + " --nwavestep 0", "nwavestep"},
      {small_grid + " --nwavestep 2000000000", "nwavestep"},
      {small_grid + " --nwavestep 300000", "unknowns"},
      {small_grid + " --wavepad -1", "wavepad"},
      {small_grid + " --wavepad 2000000000", "wavepad"},
      {small_grid + " --wavepad-frac 1e9", "wavepad"},
      {small_grid + " --wavepad-frac -1", "wavepad"},
      {small_grid + " --pixpad-frac 2", "pixpad"},
  });
}

TEST_F(BadInputs, absurd_fibers_and_resources) {
  expect_options_refused({
      {small_grid + " --memory-budget 0", "memory-budget"},
      {small_grid + " --memory-budget -1", "memory-budget"},
      {small_grid + " --memory-budget nan", "memory-budget"},
      {small_grid + " --memory-budget inf", "memory-budget"},
      {small_grid + " --memory-budget 1e30", "memory-budget"},
      {small_grid + " --threads 0", "threads"},
      {small_grid + " --threads -3", "threads"},
      {small_grid + " --threads 100000", "threads"},
      {small_grid + " --bundlesize 0", "bundlesize"},
      {small_grid + " --nsubbundles 0", "nsubbundles"},
      {small_grid + " --nsubbundles 11", "nsubbundles"},
      {small_grid + " -s -5", "specmin"},
      {small_grid + " -s 20", "specmin"},
      {small_grid + " -s 99999999999", "specmin"},
      {small_grid + " -n 0", "nspec"},
      {small_grid + " -n 1000", "nspec"},
      {small_grid + " --regularize -1", "regularize"},
      {small_grid + " --regularize nan", "regularize"},
      {small_grid + " --psferr nan", "psferr"},
      {small_grid + " --backend nosuch", "backend"},
      {small_grid + " --log-level loud", "log"},
  });
}

// ------------------------------------------------------------------------------------ masked

TEST_F(BadInputs, nan_inf_and_negative_pixels_lose_only_their_bins) {
  struct Band {
    char const* name;
    char const* hdu;
    double value;
  };
  std::vector<Band> const bands = {{"image_nan.fits", "IMAGE", nan_v},
                                   {"image_inf.fits", "IMAGE", -inf_v},
                                   {"ivar_inf.fits", "IVAR", inf_v},
                                   {"ivar_nan.fits", "IVAR", nan_v},
                                   {"ivar_negative.fits", "IVAR", -2.5}};
  std::vector<std::string> args;
  for (Band const& b : bands)
    args.push_back(extract_args(image_with_band(b.name, b.hdu, 150, 230, b.value), in.psf, out));
  auto const frames = expect_frames(args);
  for (std::size_t k = 0; k < bands.size(); ++k) {
    SCOPED_TRACE(bands[k].name);
    if (frames[k].nspec > 0)
      EXPECT_GT(expect_band_lost(frames[k], 150, 230), 20 * 30);  // ~40 bins a fiber
  }
}

TEST_F(BadInputs, all_zero_or_fully_masked_ivar_gives_an_empty_valid_frame) {
  std::string const zero = image_with_band("ivar_zero.fits", "IVAR", 0, 400, 0.0);
  std::string const masked = image_with_band("mask_all.fits", "MASK", 0, 400, 1.0);
  for (FrameData const& fr :
       expect_frames({extract_args(zero, in.psf, out), extract_args(masked, in.psf, out)})) {
    EXPECT_GT(fr.nspec, 0);
    for (std::size_t i = 0; i < fr.ivar.size(); ++i) {
      ASSERT_EQ(fr.ivar[i], 0.0f) << i;
      ASSERT_TRUE(fr.mask[i] & specmask::ALLBADPIX) << i;
      ASSERT_EQ(fr.flux[i], 0.0f) << i;
    }
  }
}

TEST_F(BadInputs, huge_values_give_finite_frames) {
  // Values beyond the float range in a double image become Inf as floats: unusable pixels.
  std::string const f8 =
      image_with_band("image_f8_huge.fits", "IMAGE", 150, 230, 1e300, DOUBLE_IMG);
  std::string const near_max = image_with_band("image_huge.fits", "IMAGE", 150, 230, 3e38);
  std::string const ivar_max = image_with_band("ivar_huge.fits", "IVAR", 150, 230, 3e38);
  auto const frames =
      expect_frames({extract_args(f8, in.psf, out), extract_args(near_max, in.psf, out),
                     extract_args(ivar_max, in.psf, out),
                     extract_args(in.image, in.psf, out) + " --regularize 1e308",
                     extract_args(in.image, in.psf, out) + " --psferr 1e308"});
  // Lost like NaN pixels.
  if (frames[0].nspec > 0) EXPECT_GT(expect_band_lost(frames[0], 150, 230), 20 * 30);
  // Pixels near the float limit are numbers, but the fluxes they give do not fit a float32
  // frame: those bins are flagged (IVAR = 0, BAD2DFIT) instead of written as Inf.
  FrameData const& fr = frames[1];
  int flagged = 0;
  for (int s = 0; s < fr.nspec; ++s)
    for (int w = 0; w < fr.nwave; ++w) {
      auto const [lo, hi] = spot_rows(s, fr.wavelength[std::size_t(w)]);
      if (lo < 150 || hi >= 230) continue;
      std::size_t const i = bin_index(fr, s, w);
      EXPECT_EQ(fr.ivar[i], 0.0f) << s << " " << w;
      EXPECT_TRUE(fr.mask[i] & specmask::BAD2DFIT) << s << " " << w;
      ++flagged;
    }
  EXPECT_GT(flagged, 20 * 30);
  // A huge inverse variance, and huge but finite option values: finite frames (checked by
  // expect_frames).
  for (std::size_t k = 2; k < frames.size(); ++k) EXPECT_GT(frames[k].nspec, 0) << k;
}

TEST_F(BadInputs, traces_leaving_the_ccd_give_masked_bins) {
  // Fibers 0-2 moved 60 px left (off the chip), every trace 150 px up (the red end falls off
  // the top).
  std::string const p = path("psf_off_chip.fits");
  std::string const tmp = path("psf_off_chip_x.fits");
  fe::edit_image(in.psf, tmp, "XTRACE", [](std::vector<double>& v, std::vector<long> const& ax) {
    for (long f = 0; f < 3; ++f) v[std::size_t(f * ax[0])] -= 60;  // P_0 = 1: a shift
  });
  fe::edit_image(tmp, p, "YTRACE", [](std::vector<double>& v, std::vector<long> const& ax) {
    for (long f = 0; f < ax[1]; ++f) v[std::size_t(f * ax[0])] += 150;
  });
  auto const psf = kspecter::io::read_psf(p);
  FrameData const fr = expect_frame(extract_args(in.image, p, out));
  if (fr.nspec == 0) return;
  int off = 0, on = 0;
  for (int s = 0; s < fr.nspec; ++s)
    for (int w = 0; w < fr.nwave; ++w) {
      double const wl = fr.wavelength[std::size_t(w)];
      double const x = psf.xtrace.value(s, wl), y = psf.ytrace.value(s, wl);
      double const hx = psf.hsizex + 1, hy = psf.hsizey + 1;
      std::size_t const i = bin_index(fr, s, w);
      if (x + hx < 0 || y - hy >= psf.npix_y) {
        ++off;
        EXPECT_EQ(fr.ivar[i], 0.0f) << s << " " << w;
        EXPECT_TRUE(fr.mask[i] & specmask::ALLBADPIX) << s << " " << w;
      } else if (x - hx >= 0 && x + hx < psf.npix_x && y - hy >= 0 && y + hy < psf.npix_y) {
        ++on;
        EXPECT_GT(fr.ivar[i], 0.0f) << s << " " << w;
      }
    }
  EXPECT_GT(off, 3 * 150);
  EXPECT_GT(on, 10 * 40);
}

}  // namespace
