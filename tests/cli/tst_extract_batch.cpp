// `kspecter extract --batch`: many frames in one job, at 1, 2 and 4 MPI ranks (whole frames
// per rank, and groups of ranks sharing a frame when frames are fewer than ranks). Every frame
// equals its own single-frame run bit for bit; a failing frame ends the job with one message
// and a non-zero exit, without hanging and without partial or temporary files.
#include <kspecter/io/frame_file.hpp>

#include <run_command.hpp>

#include <gtest/gtest.h>

#include <sched.h>
#include <unistd.h>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <string>

namespace {

namespace fs = std::filesystem;
using kspecter::test::CommandResult;

std::string const exe = KSPECTER_CLI_PATH;
// A narrow CCD with 30 fibers: three bundles of ten, small enough for a few seconds a job.
std::string const layout = "--bundlesize 10 --nsubbundles 2 -w 6000,6120,0.8";
// A hang is a failure, not a stuck CI job.
std::string const guard = "timeout 300 ";

CommandResult run(std::string const& cmd) { return kspecter::test::run_command(cmd); }

std::string mpiexec(int np) {
#ifdef KSPECTER_MPIEXEC
  return std::string(KSPECTER_MPIEXEC) + " -n " + std::to_string(np) +
         " --oversubscribe -x OMP_NUM_THREADS=1 ";
#else
  (void)np;
  return "";
#endif
}

class ExtractBatch : public ::testing::Test {
 protected:
  // Set-up failures are recorded and fail every test (an ASSERT in SetUpTestSuite would make
  // GoogleTest report the tests as skipped, which CTest does not count as a failure).
  static void SetUpTestSuite() { setup_error_ = prepare(); }
  void SetUp() override { ASSERT_TRUE(setup_error_.empty()) << setup_error_; }
  static std::string prepare() {
    dir_ = fs::path(KSPECTER_TEST_BINARY_DIR) / "scratch" /
           ("extract_batch." + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    auto r =
        run(exe + " make-psf --log-level quiet --nfiber 30 --ccd 300,4128 -o " + path("psf.fits"));
    if (r.status != 0) return r.out;
    for (int i = 0; i < 3; ++i) {
      r = run(exe + " simulate --log-level quiet --psf " + path("psf.fits") + " -o " + image(i) +
              " --seed " + std::to_string(11 + i) + " -w 6000,6120,0.8");
      if (r.status != 0) return r.out;
    }
    // The references: every frame alone, on one rank (frame 2 on its own, narrower grid).
    for (int i = 0; i < 3; ++i) {
      r = run(exe + " extract --log-level quiet -i " + image(i) + " -p " + path("psf.fits") +
              " -o " + path("ref" + std::to_string(i) + ".fits") + " " + layout +
              (i == 2 ? " -w 6010,6100,0.8" : ""));
      if (r.status != 0) return r.out;
    }
    return "";
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }
  static std::string path(std::string const& name) { return (dir_ / name).string(); }
  static std::string image(int i) { return path("img" + std::to_string(i) + ".fits"); }

  // A batch list in its own folder: three frames, the third with its own grid; `bad` lines
  // replace frame lines by index.
  static std::string make_list(std::string const& name,
                               std::map<int, std::string> const& bad = {}) {
    fs::create_directories(dir_ / name);
    std::ofstream list(path(name + "/list.txt"));
    list << "# image psf output [grid]\n";
    for (int i = 0; i < 3; ++i) {
      auto const it = bad.find(i);
      if (it != bad.end()) {
        list << it->second << "\n";
        continue;
      }
      list << image(i) << " " << path("psf.fits") << " "
           << path(name + "/f" + std::to_string(i) + ".fits") << (i == 2 ? " 6010,6100,0.8" : "")
           << "\n\n";
    }
    return path(name + "/list.txt");
  }
  static fs::path dir_;
  static std::string setup_error_;
};
fs::path ExtractBatch::dir_;
std::string ExtractBatch::setup_error_;

void expect_same_frame(std::string const& a, std::string const& b) {
  auto const x = kspecter::io::read_frame(a), y = kspecter::io::read_frame(b);
  EXPECT_EQ(x.wavelength, y.wavelength) << a;
  EXPECT_EQ(x.flux, y.flux) << a;
  EXPECT_EQ(x.ivar, y.ivar) << a;
  EXPECT_EQ(x.mask, y.mask) << a;
  EXPECT_EQ(x.resolution, y.resolution) << a;
  EXPECT_EQ(x.chi2pix, y.chi2pix) << a;
}

// Only the files the test expects: no temporaries of the atomic writes are left behind.
std::vector<std::string> files_in(fs::path const& d) {
  std::vector<std::string> names;
  for (auto const& e : fs::directory_iterator(d)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

TEST_F(ExtractBatch, every_frame_equals_its_single_frame_run_at_1_2_and_4_ranks) {
  std::vector<int> ranks{1};
#ifdef KSPECTER_MPIEXEC
  ranks.insert(ranks.end(), {2, 4});  // 4 ranks > 3 frames: groups of ranks share frames
#endif
  for (int np : ranks) {
    std::string const name = "np" + std::to_string(np);
    auto const list = make_list(name);
    auto const r = run(guard + mpiexec(np) + exe + " extract --batch " + list + " " + layout);
    ASSERT_EQ(r.status, 0) << r.out;
    EXPECT_NE(r.out.find("extracted 3 frames"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("on " + std::to_string(np) + " rank"), std::string::npos) << r.out;
    // Progress: every frame announced once by rank 0, with an ETA.
    for (int k = 1; k <= 3; ++k)
      EXPECT_NE(r.out.find("frame " + std::to_string(k) + "/3 written"), std::string::npos)
          << r.out;
    EXPECT_NE(r.out.find("ETA"), std::string::npos) << r.out;
    for (int i = 0; i < 3; ++i)
      expect_same_frame(path(name + "/f" + std::to_string(i) + ".fits"),
                        path("ref" + std::to_string(i) + ".fits"));
    EXPECT_EQ(files_in(dir_ / name),
              (std::vector<std::string>{"f0.fits", "f1.fits", "f2.fits", "list.txt"}));
  }
}

TEST_F(ExtractBatch, a_failing_frame_ends_the_job_with_one_message_and_no_partial_output) {
  // A truncated PSF: the reader names the file and its problem.
  std::string const broken = path("broken_psf.fits");
  {
    std::ifstream in(path("psf.fits"), std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::ofstream(broken, std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  }
  std::vector<int> ranks{1};
#ifdef KSPECTER_MPIEXEC
  ranks.insert(ranks.end(), {2, 4});
#endif
  for (int np : ranks) {
    for (std::string const what : {"missing", "broken"}) {
      std::string const name = "fail_" + what + std::to_string(np);
      std::string const output = path(name + "/f1.fits");
      std::string const line =
          what == std::string("missing")
              ? path("no_such_image.fits") + " " + path("psf.fits") + " " + output
              : image(1) + " " + broken + " " + output;
      auto const list = make_list(name, {{1, line}});
      auto const r = run(guard + mpiexec(np) + exe + " extract --batch " + list + " " + layout);
      SCOPED_TRACE(name);
      // A missing input is found before any work (no frame written), a broken one when its
      // frame is read; both exit 1. 124 would be the timeout: a hang.
      bool const missing = what == std::string("missing");
      EXPECT_EQ(r.status, 1) << r.out;
      // One message, from rank 0, naming the frame and the file.
      std::regex const error_line("kspecter extract: error: ");
      auto const n = std::distance(std::sregex_iterator(r.out.begin(), r.out.end(), error_line),
                                   std::sregex_iterator());
      EXPECT_EQ(n, 1) << r.out;
      EXPECT_NE(r.out.find("frame " + output), std::string::npos) << r.out;
      EXPECT_NE(
          r.out.find(what == std::string("missing") ? "no_such_image.fits" : "broken_psf.fits"),
          std::string::npos)
          << r.out;
      if (missing)
        EXPECT_EQ(files_in(dir_ / name), std::vector<std::string>{"list.txt"});
      else
        EXPECT_NE(r.out.find("stopped after"), std::string::npos) << r.out;
      EXPECT_EQ(r.out.find("MPI_ABORT"), std::string::npos) << "the job ends without MPI_Abort\n"
                                                            << r.out;
      EXPECT_FALSE(fs::exists(output));
      // Frames that were written are complete and right; nothing else is in the folder.
      for (auto const& f : files_in(dir_ / name)) {
        if (f == "list.txt") continue;
        ASSERT_TRUE(f == "f0.fits" || f == "f2.fits") << "unexpected file " << f;
        expect_same_frame(path(name + "/" + f), path(std::string("ref") + f[1] + ".fits"));
      }
    }
  }
}

TEST_F(ExtractBatch, malformed_lists_are_refused_before_any_work) {
  auto const list = make_list("malformed", {{1, image(1) + " " + path("psf.fits")}});
  auto r = run(exe + " extract --batch " + list + " " + layout);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("list.txt:4: expected `image psf output [WMIN,WMAX,DW]`, found 2 fields"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(files_in(dir_ / "malformed"), std::vector<std::string>{"list.txt"});

  auto const dup = make_list(
      "duplicate", {{1, image(1) + " " + path("psf.fits") + " " + path("duplicate/f0.fits")}});
  r = run(exe + " extract --batch " + dup + " " + layout);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("is also written by"), std::string::npos) << r.out;

  auto const grid = make_list("grid", {{1, image(1) + " " + path("psf.fits") + " " +
                                               path("grid/f1.fits") + " 6000,x,0.8"}});
  r = run(exe + " extract --batch " + grid + " " + layout);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("list.txt:4: the wavelength grid must be WMIN,WMAX,DW, got '6000,x,0.8'"),
            std::string::npos)
      << r.out;

  r = run(exe + " extract --batch " + list + " -i " + image(0) + " " + layout);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("--batch replaces -i/-p/-o"), std::string::npos) << r.out;
  r = run(exe + " extract -p " + path("psf.fits") + " -o " + path("x.fits") + " " + layout);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("--input is required (or --batch)"), std::string::npos) << r.out;
}

// Unbound ranks of one node divide its cores among them (OpenMP threads per rank) unless the
// user set OMP_NUM_THREADS: no oversubscription by default.
TEST(ExtractRanks, unbound_ranks_share_the_node_cores) {
#ifndef KSPECTER_MPIEXEC
  GTEST_SKIP() << "built without MPI";
#else
  cpu_set_t set;
  ASSERT_EQ(sched_getaffinity(0, sizeof set, &set), 0);
  int const cores = CPU_COUNT(&set);
  std::string const launch =
      std::string(KSPECTER_MPIEXEC) + " --oversubscribe --bind-to none -n 2 ";
  auto r = run("env -u OMP_NUM_THREADS " + launch + exe + " info");
  ASSERT_EQ(r.status, 0) << r.out;
  // `info` prints "concurrency N" on host builds and "concurrency <GPU> (host N)" on GPU ones.
  std::regex const host_threads("concurrency +([0-9]+)( \\(host ([0-9]+)\\))?");
  auto threads = [&](std::string const& out) {
    std::smatch m;
    if (!std::regex_search(out, m, host_threads)) return -1;
    return std::stoi(m[3].matched ? m[3].str() : m[1].str());
  };
  EXPECT_EQ(threads(r.out), std::max(1, cores / 2)) << r.out;
  r = run("OMP_NUM_THREADS=3 " + launch + "-x OMP_NUM_THREADS " + exe + " info");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(threads(r.out), 3) << "OMP_NUM_THREADS wins\n" << r.out;
#endif
}

}  // namespace
