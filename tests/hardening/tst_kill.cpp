// Outputs are never half-written: `kspecter extract` (frame and model image) and `kspecter
// simulate`, killed with SIGTERM or SIGKILL at seeded random moments and in the middle of
// writing, leave at each output path either the previous complete file, byte for byte (or
// nothing, when there was none), or, when the run finished before the signal, the complete
// new file with the reference numbers.
//
// Temporaries: after SIGTERM none remains (a handler removes it and the process dies of the
// signal). SIGKILL cannot be caught: the temporary stays, named .NAME.tmp.HOST.PID after the
// dead process, and the next write of that output removes it.
#include "child_process.hpp"
#include "fits_edit.hpp"
#include "frame_checks.hpp"
#include "small_inputs.hpp"

#include <kspecter/io/frame_file.hpp>
#include <kspecter/io/preproc_file.hpp>

#include <gtest/gtest.h>

#include <poll.h>
#include <sys/inotify.h>
#include <unistd.h>
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace kspecter::test;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// One output of the run under test: its path, what it held before (nothing when empty), and
// how to tell that a file there is the complete new output.
struct Output {
  std::string path;
  std::optional<std::string> previous;
  std::function<::testing::AssertionResult(std::string const&)> is_complete_new;

  void restore() const {
    fs::remove(path);
    if (previous) std::ofstream(path, std::ios::binary) << *previous;
  }
  bool untouched() const {
    return previous ? fs::exists(path) && file_bytes(path) == *previous : !fs::exists(path);
  }
  // The run was killed: the path holds what it held before.
  void expect_untouched() const {
    if (previous) {
      ASSERT_TRUE(fs::exists(path)) << path << " was removed";
      EXPECT_TRUE(file_bytes(path) == *previous) << path << " was changed";
    } else {
      EXPECT_FALSE(fs::exists(path)) << path << " exists after a killed run";
    }
  }
  // The run may have finished before the signal: the path holds the complete new file or,
  // while it had not been renamed yet, the previous one.
  void expect_old_or_complete_new() const {
    if (fs::exists(path) && (!previous || file_bytes(path) != *previous))
      EXPECT_TRUE(is_complete_new(path));
    else
      expect_untouched();
  }
};

struct Kill : ::testing::Test {
  SmallInputs in;

  void SetUp() override { ASSERT_NO_FATAL_FAILURE(make_small_inputs(in)); }
  // The outputs are tens of MB: keep them only when something failed.
  void TearDown() override {
    if (!HasFailure()) fs::remove_all(in.dir);
  }

  // Temporaries of `outputs` that the run `pid` left in the folder, each checked to be named
  // after it. Those in `before` are an earlier SIGKILL's: the run was killed before it came to
  // write that output, which is when it sweeps them.
  int leftover_temps(std::vector<Output> const& outputs, pid_t pid,
                     std::vector<std::string> const& before) {
    int n = 0;
    for (auto const& name : temp_files(in.dir)) {
      if (std::find(before.begin(), before.end(), name) != before.end()) continue;
      bool ours = false;
      for (auto const& o : outputs) {
        std::string const prefix = "." + fs::path(o.path).filename().string() + ".tmp.";
        ours = ours || name.compare(0, prefix.size(), prefix) == 0;
      }
      if (!ours) continue;
      ++n;
      // ".NAME.tmp.HOST.PID.TAG", TAG 16 random hex digits (io/atomic_output.hpp).
      std::string const pid_part = "." + std::to_string(pid) + ".";
      std::size_t const at = name.size() >= 17 + pid_part.size()
                                 ? name.size() - 16 - pid_part.size()
                                 : std::string::npos;
      EXPECT_TRUE(at != std::string::npos && name.compare(at, pid_part.size(), pid_part) == 0 &&
                  name.find_first_not_of("0123456789abcdef", name.size() - 16) == std::string::npos)
          << name << " is not named after the killed process " << pid;
    }
    return n;
  }

  // Runs `args`, sends `sig` `delay` seconds after the start and checks the outputs.
  // Returns true when the signal ended the run.
  bool kill_after(std::string const& args, std::vector<Output> const& outputs, int sig,
                  double delay) {
    for (auto const& o : outputs) o.restore();
    auto const before = temp_files(in.dir);
    ChildProcess child(kspecter_argv(args), in.dir + "/child.log");
    auto const until = Clock::now() + std::chrono::duration<double>(delay);
    while (Clock::now() < until && !child.finished())
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    child.signal(sig);
    child.wait();
    check(child, outputs, sig, before);
    return child.killed_by(sig);
  }

  // Runs `args` and sends `sig` the moment the temporary of `outputs[0]` appears. Returns true
  // when the signal came while that file was being written (the run died of it before the
  // file was renamed into place).
  bool kill_while_writing(std::string const& args, std::vector<Output> const& outputs, int sig) {
    for (auto const& o : outputs) o.restore();
    std::string const prefix = "." + fs::path(outputs[0].path).filename().string() + ".tmp.";
    int const fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
    EXPECT_GE(fd, 0);
    inotify_add_watch(fd, in.dir.c_str(), IN_CREATE);
    auto const before = temp_files(in.dir);
    ChildProcess child(kspecter_argv(args), in.dir + "/child.log");
    bool signalled = false;
    while (!signalled && !child.finished()) {
      pollfd p{fd, POLLIN, 0};
      if (poll(&p, 1, 5) <= 0) continue;
      alignas(inotify_event) char buf[8192];
      ssize_t const len = read(fd, buf, sizeof buf);
      for (char* e = buf; len > 0 && e < buf + len;) {
        auto const* ev = reinterpret_cast<inotify_event const*>(e);
        if (ev->len && std::string(ev->name).compare(0, prefix.size(), prefix) == 0 && !signalled) {
          child.signal(sig);
          signalled = true;
        }
        e += sizeof(inotify_event) + ev->len;
      }
    }
    close(fd);
    child.wait();
    check(child, outputs, sig, before);
    return signalled && child.killed_by(sig) && outputs[0].untouched();
  }

  void check(ChildProcess const& child, std::vector<Output> const& outputs, int sig,
             std::vector<std::string> const& before) {
    SCOPED_TRACE("signal " + std::to_string(sig) + ", pid " + std::to_string(child.pid()));
    if (child.exited()) {  // finished before the signal
      EXPECT_EQ(child.exit_code(), 0) << child.output();
      for (auto const& o : outputs) EXPECT_TRUE(o.is_complete_new(o.path));
      // Writing its outputs swept what earlier SIGKILLs had left.
      EXPECT_TRUE(temp_files(in.dir).empty()) << temp_files(in.dir).front();
    } else {
      EXPECT_TRUE(child.killed_by(sig))
          << "died of signal " << child.term_signal() << ": " << child.output();
      for (auto const& o : outputs) o.expect_old_or_complete_new();
    }
    int const temps = leftover_temps(outputs, child.pid(), before);
    if (sig != SIGKILL) EXPECT_EQ(temps, 0) << "a temporary survived signal " << sig;
  }
};

// ---------------------------------------------------------------------------------- extract

struct KillExtract : Kill {
  std::string frame, model, args;
  kspecter::io::FrameData ref;
  std::vector<double> ref_model;
  std::string prev_frame, prev_model;
  double seconds = 0;

  void SetUp() override {
    Kill::SetUp();
    if (HasFatalFailure()) return;
    frame = in.dir + "/frame.fits";
    model = in.dir + "/model.fits";
    // The frame copies the image's FIBERMAP: a 10 MB one (a real one has thousands of rows)
    // makes the write last long enough for a signal sent when it starts to arrive during it.
    std::string const image = in.dir + "/big_fibermap.fits";
    fits_edit::rewrite(in.image, image, [](std::string const& name, fitsfile* from, fitsfile* to) {
      if (name != "FIBERMAP") return false;
      int st = 0, ncol = 0;
      fits_edit::check(fits_copy_hdu(from, to, 0, &st), "copy FIBERMAP");
      fits_get_num_cols(to, &ncol, &st);
      fits_edit::check(fits_insert_col(to, ncol + 1, const_cast<char*>("PADDING"),
                                       const_cast<char*>("500000B"), &st),
                       "add a column");
      return true;
    });
    // One OpenMP thread: on a two-core machine the test then has a core to itself, and its
    // signal reaches the run within the milliseconds a write takes.
    args = extract_args(image, in.psf, frame) + " -m " + model + " --threads 1";
    // Reference: an undisturbed run, timed.
    auto const t0 = Clock::now();
    auto r = run_kspecter(args);
    seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    ASSERT_EQ(r.status, 0) << r.out;
    ref = kspecter::io::read_frame(frame);
    ref_model = fits_edit::read_image(model, "MODEL");
    // The previous outputs: another extraction (fewer spectra) at the same paths.
    r = run_kspecter(extract_args(image, in.psf, frame) + " -n 10 -m " + model);
    ASSERT_EQ(r.status, 0) << r.out;
    prev_frame = file_bytes(frame);
    prev_model = file_bytes(model);
  }

  // With previous files, or (`fresh`) with none.
  std::vector<Output> outputs(bool fresh) {
    auto frame_ok = [this](std::string const& p) {
      auto fr = kspecter::io::read_frame(p);
      return same_frame_data(ref, fr);
    };
    auto model_ok = [this](std::string const& p) {
      return same_bits(ref_model, fits_edit::read_image(p, "MODEL"))
                 ? ::testing::AssertionSuccess()
                 : ::testing::AssertionFailure() << p << " is not the reference model";
    };
    return {Output{frame, fresh ? std::nullopt : std::optional<std::string>(prev_frame), frame_ok},
            Output{model, fresh ? std::nullopt : std::optional<std::string>(prev_model), model_ok}};
  }

  void random_kills(int sig, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> when(0.0, 1.2 * seconds);
    int killed = 0;
    for (int i = 0; i < 4; ++i) {
      double const delay = when(rng);
      SCOPED_TRACE("kill " + std::to_string(i) + " after " + std::to_string(delay) + " s of " +
                   std::to_string(seconds));
      killed += kill_after(args, outputs(i % 2 == 1), sig, delay) ? 1 : 0;
    }
    EXPECT_GT(killed, 0);  // the delays reach into the run
  }
};

TEST_F(KillExtract, sigterm_at_random_moments) { random_kills(SIGTERM, 20240611u); }
TEST_F(KillExtract, sigint_at_random_moments) { random_kills(SIGINT, 7u); }

TEST_F(KillExtract, sigkill_at_random_moments_then_the_next_run_cleans_up) {
  // A first SIGKILL while the frame is written leaves its temporary, so the random kills
  // below meet an earlier run's leftover: those that die before writing the frame keep it,
  // one that finishes sweeps it.
  kill_while_writing(args, outputs(false), SIGKILL);
  random_kills(SIGKILL, 1234567u);
  // Whatever SIGKILL left is gone after the next complete run of the same outputs.
  auto const r = run_kspecter(args);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_TRUE(temp_files(in.dir).empty()) << temp_files(in.dir).front();
  EXPECT_TRUE(same_frame_data(ref, kspecter::io::read_frame(frame)));
}

TEST_F(KillExtract, killed_while_writing_the_frame) {
  for (int sig : {SIGTERM, SIGKILL}) {
    SCOPED_TRACE("signal " + std::to_string(sig));
    int caught = 0;
    for (int attempt = 0; attempt < 6 && caught < 2; ++attempt)
      caught += kill_while_writing(args, outputs(attempt % 2 == 1), sig) ? 1 : 0;
    EXPECT_GE(caught, 1) << "never caught the frame being written";
  }
  // SIGKILL left the frame's temporary (named after its process): the next run removes it.
  // (An attempt after the last catch may have finished and swept it: catch one more.)
  for (int attempt = 0; attempt < 6 && temp_files(in.dir).empty(); ++attempt)
    kill_while_writing(args, outputs(false), SIGKILL);
  EXPECT_FALSE(temp_files(in.dir).empty());
  auto const r = run_kspecter(args);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_TRUE(temp_files(in.dir).empty()) << temp_files(in.dir).front();
}

// --------------------------------------------------------------------------------- simulate

TEST_F(Kill, simulate_killed_at_random_moments_and_while_writing) {
  std::string const image = in.dir + "/sim.fits";
  std::string const args =
      "simulate -p " + in.psf + " -o " + image + " " + small_grid + " --seed 3";
  auto const t0 = Clock::now();
  auto r = run_kspecter(args);
  double const seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  ASSERT_EQ(r.status, 0) << r.out;
  auto const ref = kspecter::io::read_preproc(image);
  r = run_kspecter("simulate -p " + in.psf + " -o " + image + " " + small_grid + " --seed 4");
  ASSERT_EQ(r.status, 0) << r.out;
  std::string const prev = file_bytes(image);
  auto complete = [&](std::string const& p) {
    auto const img = kspecter::io::read_preproc(p);
    return same_bits(ref.image, img.image) && same_bits(ref.ivar, img.ivar) && ref.mask == img.mask
               ? ::testing::AssertionSuccess()
               : ::testing::AssertionFailure() << p << " is not the reference image";
  };
  std::vector<Output> const with_prev = {Output{image, prev, complete}};
  std::vector<Output> const fresh = {Output{image, std::nullopt, complete}};

  std::mt19937 rng(99u);
  std::uniform_real_distribution<double> when(0.0, 1.2 * seconds);
  for (int i = 0; i < 6; ++i) {
    int const sig = i % 2 ? SIGKILL : SIGTERM;
    SCOPED_TRACE("random kill " + std::to_string(i));
    kill_after(args, i % 3 ? with_prev : fresh, sig, when(rng));
  }
  for (int sig : {SIGTERM, SIGKILL}) {
    int caught = 0;
    for (int attempt = 0; attempt < 6 && caught < 2; ++attempt)
      caught += kill_while_writing(args, attempt % 2 ? fresh : with_prev, sig) ? 1 : 0;
    EXPECT_GE(caught, 1) << "never caught the image being written (signal " << sig << ")";
  }
  r = run_kspecter(args);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_TRUE(temp_files(in.dir).empty()) << temp_files(in.dir).front();
}

}  // namespace
