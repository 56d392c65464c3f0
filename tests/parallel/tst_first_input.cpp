// JobOptions::first_input: a frame whose reading a front end started early (the CLI starts it
// before MPI and the GPU come up) is extracted from that input, not read again, and gives the
// frame an ordinary job gives; a failed early read fails the job with the reader's message.
#include <kspecter/parallel/extract_job.hpp>

#include <run_command.hpp>

#include <gtest/gtest.h>

#include <unistd.h>
#include <filesystem>
#include <string>

namespace {

namespace fs = std::filesystem;
using namespace kspecter;

std::string const exe = KSPECTER_CLI_PATH;

class FirstInput : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = fs::path(KSPECTER_TEST_BINARY_DIR) / "scratch" /
           ("first_input." + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    auto r = test::run_command(exe + " make-psf --log-level quiet --nfiber 10 --ccd 300,4128 -o " +
                               path("psf.fits"));
    if (r.status == 0)
      r = test::run_command(exe + " simulate --log-level quiet --psf " + path("psf.fits") + " -o " +
                            path("img.fits") + " --seed 5 -w 6000,6060,0.8");
    setup_error_ = r.status == 0 ? "" : r.out;
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }
  void SetUp() override { ASSERT_TRUE(setup_error_.empty()) << setup_error_; }

  static std::string path(std::string const& name) { return (dir_ / name).string(); }
  static parallel::JobFrame frame(std::string const& image) {
    parallel::JobFrame f;
    f.image = image;
    f.psf = path("psf.fits");
    f.keep_result = true;
    return f;
  }
  static parallel::JobOptions options() {
    parallel::JobOptions o;
    o.extract.wmin = 6000;
    o.extract.wmax = 6060;
    o.extract.dw = 0.8;
    o.extract.bundlesize = 5;
    o.backend = "serial";
    return o;
  }
  static parallel::JobOutcome run(parallel::JobFrame const& f, parallel::JobOptions const& o) {
    parallel::JobProgress silent;
    return parallel::run_extract_job(parallel::Communicator::self(), {f}, o, silent);
  }

  static fs::path dir_;
  static std::string setup_error_;
};
fs::path FirstInput::dir_;
std::string FirstInput::setup_error_;

TEST_F(FirstInput, an_input_read_early_is_extracted_and_not_read_again) {
  auto const reference = run(frame(path("img.fits")), options());
  ASSERT_TRUE(reference.ok()) << reference.summary.error;

  // The job's own frame names a file that is not there: only the early input can serve.
  auto o = options();
  o.first_input = parallel::start_reading(frame(path("img.fits")), o);
  auto const early = run(frame(path("absent.fits")), o);
  ASSERT_TRUE(early.ok()) << early.summary.error;
  auto const& a = *reference.results.at(0);
  auto const& b = *early.results.at(0);
  EXPECT_EQ(a.nspec, 10);
  EXPECT_EQ(a.flux, b.flux);
  EXPECT_EQ(a.ivar, b.ivar);
  EXPECT_EQ(a.resolution, b.resolution);
  EXPECT_EQ(a.mask, b.mask);
}

TEST_F(FirstInput, a_failed_early_read_fails_the_job_as_a_failed_read_does) {
  auto const ordinary = run(frame(path("absent.fits")), options());
  ASSERT_FALSE(ordinary.ok());
  EXPECT_NE(ordinary.summary.error.find("absent.fits"), std::string::npos)
      << ordinary.summary.error;

  auto o = options();
  o.first_input = parallel::start_reading(frame(path("absent.fits")), o);
  auto const early = run(frame(path("absent.fits")), o);
  ASSERT_FALSE(early.ok());
  EXPECT_EQ(early.summary.error, ordinary.summary.error);
}

}  // namespace
