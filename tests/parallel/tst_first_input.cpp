// JobOptions::first_input: a frame whose reading a front end started early (the CLI starts it
// before MPI and the GPU come up) is extracted from that input, not read again, and gives the
// frame an ordinary job gives; a failed early read fails the job with the reader's message.
#include <kspecter/parallel/extract_job.hpp>

#include <run_command.hpp>

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
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

TEST_F(FirstInput, a_batch_reads_early_the_first_frame_its_schedule_gives_this_rank) {
  // As mpiexec starts rank 1 of 2: the schedule deals frame 1 of two equal frames to it.
  ::setenv("OMPI_COMM_WORLD_RANK", "1", 1);
  ::setenv("OMPI_COMM_WORLD_SIZE", "2", 1);
  auto const first =
      parallel::start_first_frames({frame(path("img.fits")), frame(path("img.fits"))}, options());
  ::unsetenv("OMPI_COMM_WORLD_RANK");
  ::unsetenv("OMPI_COMM_WORLD_SIZE");
  EXPECT_EQ(first.frame, 1);
  ASSERT_TRUE(first.input.valid());
  ASSERT_TRUE(first.input.get().file_image);
  EXPECT_EQ(first.input.get().file_image->path, path("img.fits"));
}

TEST_F(FirstInput, an_early_input_serves_only_the_frame_it_was_read_for) {
  // Read for frame 1; this one-rank job starts with frame 0, which must be read (and fail).
  auto o = options();
  o.first_input = parallel::start_reading(frame(path("img.fits")), o);
  o.first_input_frame = 1;
  parallel::JobProgress silent;
  auto const job =
      parallel::run_extract_job(parallel::Communicator::self(),
                                {frame(path("absent.fits")), frame(path("img.fits"))}, o, silent);
  ASSERT_FALSE(job.ok());
  EXPECT_NE(job.summary.error.find("absent.fits"), std::string::npos) << job.summary.error;
}

}  // namespace
