// `kspecter simulate` as a user runs it: the same seed gives the same file on 1 and 2
// threads, the file holds what it should (truth, FIBERMAP, header), --spectra reproduces a
// frame, --noiseless and --defects do what they say, and bad arguments are refused with
// exit code 2 (usage) or 1 (input), naming the culprit.
#include <kspecter/io/preproc_file.hpp>

#include <run_command.hpp>
#include <test_data.hpp>

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>

namespace {

using Result = kspecter::test::CommandResult;
using kspecter::test::file_bytes;

Result run(std::string const& args) { return kspecter::test::run_kspecter(args); }

// A narrow synthetic PSF (30 fibers on 400 columns) keeps every file ~20 MB.
class SimulateCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = kspecter::test::scratch_dir();
    psf = dir + "/psf.fits";
    auto const r = run("make-psf --nfiber 30 --ccd 400,4128 -o " + psf + " --log-level quiet");
    ASSERT_EQ(r.status, 0) << r.out;
  }
  std::string dir, psf;
};

TEST_F(SimulateCli, same_seed_same_file_on_any_thread_count) {
  std::string const common = "simulate --psf " + psf + " -n 12 -s 3 -w 6000,6200,0.8 --seed 3";
  auto const a = run(common + " --threads 1 -o " + dir + "/a.fits");
  ASSERT_EQ(a.status, 0) << a.out;
  EXPECT_NE(a.out.find("simulate: wrote"), std::string::npos) << a.out;
  auto const b = run(common + " --threads 2 -o " + dir + "/b.fits");
  ASSERT_EQ(b.status, 0) << b.out;
  auto const c =
      run("simulate --psf " + psf + " -n 12 -s 3 -w 6000,6200,0.8 --seed 4 -o " + dir + "/c.fits");
  ASSERT_EQ(c.status, 0) << c.out;
  std::string const ba = file_bytes(dir + "/a.fits");
  EXPECT_TRUE(ba == file_bytes(dir + "/b.fits"));
  EXPECT_FALSE(ba == file_bytes(dir + "/c.fits"));

  auto const img = kspecter::io::read_preproc(dir + "/a.fits");
  EXPECT_EQ(img.nx, 400);
  EXPECT_EQ(img.ny, 4128);
  EXPECT_TRUE(img.fibermap.has_value());
  auto const t = kspecter::io::read_truth(dir + "/a.fits");
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->specmin, 3);
  EXPECT_EQ(t->nspec, 12);
  EXPECT_EQ(t->wavelength.size(), 251u);
  EXPECT_EQ(t->objtype.size(), 12u);
  for (char const* card : {"SIMSEED =                    3", "NOISELES=                    F",
                           "DEFECTS =                    F", "RDNOISE =                  3.0"})
    EXPECT_NE(ba.find(card), std::string::npos) << card;
}

TEST_F(SimulateCli, spectra_file_reproduces_the_frame) {
  std::string const first = dir + "/first.fits", second = dir + "/second.fits";
  auto r = run("simulate --psf " + psf + " -n 6 -w 6500,6600,0.5 --seed 9 -o " + first);
  ASSERT_EQ(r.status, 0) << r.out;
  r = run("simulate --psf " + psf + " --spectra " + first + " --seed 9 -o " + second);
  ASSERT_EQ(r.status, 0) << r.out;
  auto const a = kspecter::io::read_preproc(first), b = kspecter::io::read_preproc(second);
  EXPECT_TRUE(a.image == b.image);
  EXPECT_TRUE(a.ivar == b.ivar);
  auto const ta = kspecter::io::read_truth(first), tb = kspecter::io::read_truth(second);
  ASSERT_TRUE(ta && tb);
  EXPECT_EQ(ta->flux, tb->flux);
  EXPECT_EQ(ta->wavelength, tb->wavelength);
  EXPECT_EQ(ta->objtype, tb->objtype);
  // A subset of its fibers.
  std::string const third = dir + "/third.fits";
  r = run("simulate --psf " + psf + " --spectra " + first + " -s 2 -n 3 -o " + third);
  ASSERT_EQ(r.status, 0) << r.out;
  auto const tc = kspecter::io::read_truth(third);
  ASSERT_TRUE(tc);
  EXPECT_EQ(tc->specmin, 2);
  EXPECT_EQ(tc->nspec, 3);
  EXPECT_TRUE(
      std::equal(tc->flux.begin(), tc->flux.end(), ta->flux.begin() + 2 * ta->wavelength.size()));
  // Fibers it does not hold; -w together with --spectra.
  r = run("simulate --psf " + psf + " --spectra " + first + " -s 4 -n 3 -o " + dir + "/x.fits");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find(first), std::string::npos) << r.out;
  r = run("simulate --psf " + psf + " --spectra " + first + " -w 6500,6600,1 -o " + dir +
          "/x.fits");
  EXPECT_EQ(r.status, 2) << r.out;
  // A file without truth.
  r = run("simulate --psf " + psf + " --spectra " + psf + " -o " + dir + "/x.fits");
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find("TRUTH_FLUX"), std::string::npos) << r.out;
}

TEST_F(SimulateCli, noiseless_and_defects) {
  std::string const clean = dir + "/clean.fits", dirty = dir + "/dirty.fits";
  auto r = run("simulate --psf " + psf + " -n 30 -w 6000,6300,0.8 --noiseless --readnoise 2 -o " +
               clean);
  ASSERT_EQ(r.status, 0) << r.out;
  auto const c = kspecter::io::read_preproc(clean);
  double total = 0;
  for (std::size_t p = 0; p < c.image.size(); ++p) {
    ASSERT_GE(c.image[p], 0.0f);
    ASSERT_EQ(c.mask[p], 0);
    double const want = 1.0 / (double(c.image[p]) + 4.0);  // ivar from the expected value
    ASSERT_NEAR(c.ivar[p], want, 1e-6 * want) << p;
    total += c.image[p];
  }
  auto const t = kspecter::io::read_truth(clean);
  ASSERT_TRUE(t);
  double truth_total = 0;
  for (std::size_t i = 0; i < t->flux.size(); ++i) truth_total += t->flux[i] * 0.8;
  EXPECT_NEAR(total, truth_total, 1e-5 * truth_total);

  r = run("simulate --psf " + psf + " -n 30 -w 6000,6300,0.8 --defects -o " + dirty);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("cosmic rays"), std::string::npos) << r.out;
  auto const d = kspecter::io::read_preproc(dirty);
  long masked = 0;
  for (std::size_t p = 0; p < d.mask.size(); ++p)
    if (d.mask[p]) {
      ++masked;
      ASSERT_EQ(d.ivar[p], 0.0f);
    }
  EXPECT_GT(masked, 100);
}

TEST_F(SimulateCli, bad_arguments_are_refused) {
  std::string const out = " -o " + dir + "/x.fits";
  struct Case {
    std::string args;
    int status;
    std::string words;
  };
  Case const cases[] = {
      {"simulate" + out, 2, "--psf"},
      {"simulate --psf " + psf, 2, "--output"},
      {"simulate --psf " + dir + "/nope.fits" + out, 1, "nope.fits"},
      {"simulate --psf " + psf + " -w 7000,6000,1" + out, 2, "wavelength"},
      {"simulate --psf " + psf + " -w 6000,7000" + out, 2, "--wavelength"},
      {"simulate --psf " + psf + " -s 30" + out, 2, "--specmin"},
      {"simulate --psf " + psf + " -s 25 -n 10" + out, 2, "outside"},
      {"simulate --psf " + psf + " -w 3000,3100,1" + out, 2, "outside"},
      {"simulate --psf " + psf + " --readnoise -1" + out, 2, "--readnoise"},
      {"simulate --psf " + psf + " --seed -3" + out, 2, "--seed"},
      {"simulate --psf " + psf + " -n 2 -o " + dir + "/no/such/dir/x.fits", 1, "no/such/dir"},
  };
  for (auto const& c : cases) {
    auto const r = run(c.args);
    EXPECT_EQ(r.status, c.status) << c.args << "\n" << r.out;
    EXPECT_NE(r.out.find(c.words), std::string::npos) << c.args << "\n" << r.out;
  }
  // Nothing was written where a run failed.
  EXPECT_FALSE(std::ifstream(dir + "/x.fits").good());
}

TEST(simulate_cli, synthetic_psf_by_name) {
  std::string const dir = kspecter::test::scratch_dir();
  auto const r =
      run("simulate --psf synthetic -s 100 -n 2 -w 7000,7010,1 --noiseless -o " + dir + "/s.fits");
  ASSERT_EQ(r.status, 0) << r.out;
  auto const img = kspecter::io::read_preproc(dir + "/s.fits");
  EXPECT_EQ(img.nx, 4114);
  EXPECT_EQ(img.ny, 4128);
  double total = 0;
  for (float v : img.image) total += v;
  auto const t = kspecter::io::read_truth(dir + "/s.fits");
  ASSERT_TRUE(t);
  double truth_total = 0;
  for (double f : t->flux) truth_total += f;  // 1 A bins
  EXPECT_NEAR(total, truth_total, 1e-5 * truth_total);
}

}  // namespace
