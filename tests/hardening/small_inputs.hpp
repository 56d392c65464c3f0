// The small inputs every hardening test starts from: a 20-fiber synthetic PSF of a 200 x 400
// CCD and a simulated image of it, made by `kspecter make-psf` and `kspecter simulate`, and
// the command line that extracts them (two bundles of ten fibers, 201 bins: under a second).
#pragma once

#include <run_command.hpp>
#include <test_data.hpp>

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

namespace kspecter::test {

inline std::string const kspecter_exe = KSPECTER_CLI_PATH;
inline std::string const small_grid = "-w 6020,6180,0.8";
inline std::string const small_layout = "--bundlesize 10 --nsubbundles 2";

/// The argv of `kspecter <args>`: `args` split on whitespace, after the executable's path.
inline std::vector<std::string> kspecter_argv(std::string const& args) {
  std::vector<std::string> argv = {kspecter_exe};
  std::istringstream words(args);
  for (std::string w; words >> w;) argv.push_back(w);
  return argv;
}

struct SmallInputs {
  std::string dir;    // the test's scratch folder, holding both files
  std::string psf;    // GaussHermite PSF, 20 fibers, 6000-6200 A, CCD 200 x 400 (x, y)
  std::string image;  // preproc image of it, seed 3, with truth spectra and FIBERMAP
};

/// Makes the PSF and the image in a fresh scratch folder for the current test (ASSERT-fails
/// the test when a tool fails).
inline void make_small_inputs(SmallInputs& in) {
  in.dir = scratch_dir();
  in.psf = in.dir + "/psf.fits";
  in.image = in.dir + "/image.fits";
  auto r = run_kspecter("make-psf -o " + in.psf + " --nfiber 20 --ccd 200,400 -w 6000,6200");
  ASSERT_EQ(r.status, 0) << r.out;
  r = run_kspecter("simulate -p " + in.psf + " -o " + in.image + " " + small_grid + " --seed 3");
  ASSERT_EQ(r.status, 0) << r.out;
}

/// `kspecter extract` of `image` with `psf` into `output`, small grid and layout, quiet.
inline std::string extract_args(std::string const& image, std::string const& psf,
                                std::string const& output) {
  return "extract -i " + image + " -p " + psf + " -o " + output + " " + small_grid + " " +
         small_layout + " --log-level quiet --no-truth";
}

}  // namespace kspecter::test
