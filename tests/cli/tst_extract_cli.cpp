// `kspecter make-psf | simulate | extract` end to end: a readable frame whose pulls against
// the truth are unit normal, the same numbers in FITS and HDF5 and at 1, 2 and 4 MPI ranks,
// and clear errors that leave existing outputs untouched.
#include <kspecter/io/frame_file.hpp>

#include <run_command.hpp>
#include <test_data.hpp>

#include <gtest/gtest.h>

#include <unistd.h>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <regex>
#include <string>

namespace {

using Result = kspecter::test::CommandResult;

Result run(std::string const& cmd) { return kspecter::test::run_command(cmd); }

std::string const exe = KSPECTER_CLI_PATH;
// Five bundles of ten fibers over 150 bins: small enough for seconds, big enough for MPI.
std::string const grid = "-w 6000,6120,0.8";
std::string const layout = "--bundlesize 10 --nsubbundles 2";

class ExtractCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    // ctest runs each test in its own process, possibly at the same time: one folder each.
    dir_ = std::filesystem::path(KSPECTER_TEST_BINARY_DIR) / "scratch" /
           ("extract_cli." + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    auto r = run(exe + " make-psf -o " + psf());
    ASSERT_EQ(r.status, 0) << r.out;
    r = run(exe + " simulate --psf " + psf() + " -o " + image() + " -n 50 --seed 7 " + grid);
    ASSERT_EQ(r.status, 0) << r.out;
  }
  static void TearDownTestSuite() { std::filesystem::remove_all(dir_); }
  static std::string psf() { return (dir_ / "psf.fits").string(); }
  static std::string image() { return (dir_ / "preproc.fits").string(); }
  static std::string out(std::string const& name) { return (dir_ / name).string(); }
  static std::string extract_cmd(std::string const& output) {
    return exe + " extract -i " + image() + " -p " + psf() + " -o " + output + " -n 50 " + grid +
           " " + layout;
  }
  static std::filesystem::path dir_;
};
std::filesystem::path ExtractCli::dir_;

TEST_F(ExtractCli, frame_is_complete_and_pulls_are_unit_normal) {
  auto const r = run(extract_cmd(out("frame.fits")));
  ASSERT_EQ(r.status, 0) << r.out;
  auto const fr = kspecter::io::read_frame(out("frame.fits"));
  ASSERT_EQ(fr.nspec, 50);
  ASSERT_EQ(fr.nwave, 151);
  ASSERT_EQ(fr.ndiag, 5);
  int good = 0;
  for (std::size_t i = 0; i < fr.flux.size(); ++i) {
    ASSERT_TRUE(std::isfinite(fr.flux[i]) && std::isfinite(fr.ivar[i])) << i;
    ASSERT_GE(fr.ivar[i], 0.0f);
    good += fr.ivar[i] > 0;
  }
  EXPECT_GT(good, int(0.95 * fr.flux.size()));
  for (float v : fr.resolution) ASSERT_TRUE(std::isfinite(v));
  // The summary line: pull statistics against the simulated truth.
  std::smatch m;
  std::regex const re("median ([-+0-9.]+), robust std ([0-9.]+)");
  ASSERT_TRUE(std::regex_search(r.out, m, re)) << r.out;
  EXPECT_LT(std::abs(std::stod(m[1])), 0.05) << r.out;
  EXPECT_NEAR(std::stod(m[2]), 1.0, 0.05) << r.out;
}

TEST_F(ExtractCli, hdf5_holds_the_same_numbers) {
  ASSERT_EQ(run(extract_cmd(out("a.fits"))).status, 0);
  auto const r = run(extract_cmd(out("a.h5")));
  ASSERT_EQ(r.status, 0) << r.out;
  auto const f = kspecter::io::read_frame(out("a.fits"));
  auto const h = kspecter::io::read_frame(out("a.h5"));
  EXPECT_EQ(f.flux, h.flux);
  EXPECT_EQ(f.ivar, h.ivar);
  EXPECT_EQ(f.mask, h.mask);
  EXPECT_EQ(f.resolution, h.resolution);
  EXPECT_EQ(f.wavelength, h.wavelength);
}

TEST_F(ExtractCli, reruns_are_bitwise_identical) {
  ASSERT_EQ(run(extract_cmd(out("r1.fits"))).status, 0);
  ASSERT_EQ(run(extract_cmd(out("r2.fits"))).status, 0);
  auto const a = kspecter::io::read_frame(out("r1.fits"));
  auto const b = kspecter::io::read_frame(out("r2.fits"));
  EXPECT_EQ(a.flux, b.flux);
  EXPECT_EQ(a.ivar, b.ivar);
  EXPECT_EQ(a.resolution, b.resolution);
  EXPECT_EQ(a.chi2pix, b.chi2pix);
  EXPECT_EQ(a.mask, b.mask);
}

TEST_F(ExtractCli, backends_agree_and_compare_tells_apart) {
  ASSERT_EQ(run(extract_cmd(out("serial.fits")) + " --backend serial").status, 0);
  ASSERT_EQ(run(extract_cmd(out("openmp.fits")) + " --backend openmp").status, 0);
  auto r = run(exe + " compare " + out("serial.fits") + " " + out("openmp.fits"));
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("AGREE"), std::string::npos) << r.out;
  // Another patch layout moves the flux by much less than its error but more than rounding.
  ASSERT_EQ(run(extract_cmd(out("step30.fits")) + " --nwavestep 30").status, 0);
  r = run(exe + " compare " + out("serial.fits") + " " + out("step30.fits"));
  EXPECT_EQ(r.status, 1) << r.out;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.out, m, std::regex("max \\|pull\\| +([0-9.e+-]+)"))) << r.out;
  EXPECT_GT(std::stod(m[1]), 1e-9) << r.out;
  EXPECT_LT(std::stod(m[1]), 0.1) << r.out;
}

TEST_F(ExtractCli, mpi_ranks_give_the_single_rank_frame) {
#ifndef KSPECTER_MPIEXEC
  GTEST_SKIP() << "built without MPI";
#else
  auto const one = run(extract_cmd(out("np1.fits")));
  ASSERT_EQ(one.status, 0) << one.out;
  auto const ref = kspecter::io::read_frame(out("np1.fits"));
  for (int np : {2, 4}) {
    std::string const name = out("np" + std::to_string(np) + ".fits");
    auto const r = run(std::string(KSPECTER_MPIEXEC) + " -n " + std::to_string(np) +
                       " --oversubscribe -x OMP_NUM_THREADS=1 " + extract_cmd(name));
    ASSERT_EQ(r.status, 0) << r.out;
    EXPECT_NE(r.out.find("on " + std::to_string(np) + " ranks"), std::string::npos) << r.out;
    auto const fr = kspecter::io::read_frame(name);
    EXPECT_EQ(fr.flux, ref.flux) << np << " ranks";
    EXPECT_EQ(fr.ivar, ref.ivar) << np << " ranks";
    EXPECT_EQ(fr.resolution, ref.resolution) << np << " ranks";
    EXPECT_EQ(fr.chi2pix, ref.chi2pix) << np << " ranks";
    EXPECT_EQ(fr.mask, ref.mask) << np << " ranks";
  }
#endif
}

TEST_F(ExtractCli, bad_inputs_name_the_problem_and_keep_old_output) {
  std::string const keep = out("keep.fits");
  ASSERT_EQ(run(extract_cmd(keep)).status, 0);
  auto const before = std::filesystem::file_size(keep);
  auto const t_before = std::filesystem::last_write_time(keep);

  auto r =
      run(exe + " extract -i " + out("missing.fits") + " -p " + psf() + " -o " + keep + " " + grid);
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find("missing.fits"), std::string::npos) << r.out;

  r = run(exe + " extract -i " + image() + " -p " + psf() + " -o " + keep + " -w 3000,3100,0.8");
  EXPECT_NE(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("wavelength"), std::string::npos) << r.out;

  r = run(exe + " extract -i " + image() + " -p " + psf() + " -o " + keep + " " + grid +
          " --nwavestep 0");
  EXPECT_NE(r.status, 0) << r.out;

  // The PSF given as image: IMAGE HDU missing.
  r = run(exe + " extract -i " + psf() + " -p " + psf() + " -o " + keep + " " + grid);
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find("psf.fits"), std::string::npos) << r.out;

  EXPECT_EQ(std::filesystem::file_size(keep), before);
  EXPECT_TRUE(std::filesystem::last_write_time(keep) == t_before);
}

}  // namespace
