// What a termination signal does to an output being written (io/atomic_output): its
// temporary is removed before the signal goes on to what was there before (the default
// action, or a handler found installed, as the CUDA driver installs one), a signal that
// lands while the temporary is being created waits for the file so that it is removed too,
// a process that goes on after the signal starts no new output, and an ignored signal stays
// ignored. Each case runs in a death-test child: the handlers and the "signal received"
// state are process-wide.
#include "io/atomic_output.hpp"

#include <kspecter/core/error.hpp>

#include <test_data.hpp>

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>

namespace {

namespace fs = std::filesystem;
using kspecter::io::AtomicOutput;

// The hidden temporaries in `dir`.
int temporaries(std::string const& dir) { return int(kspecter::test::temp_files(dir).size()); }

void create_empty(AtomicOutput& out) {
  out.create([](char const* temp) { ::close(::open(temp, O_CREAT | O_WRONLY | O_TRUNC, 0644)); });
}

// A child's check: on failure it says what and exits 3 (the death test then shows it).
void require(bool ok, char const* what) {
  if (ok) return;
  std::fprintf(stderr, "child: %s\n", what);
  std::_Exit(3);
}

// ---- a handler installed before kspecter's, like the CUDA driver's: it notes whether the
// temporary was already gone, then dies of the signal by the default action.
char const* g_temp = nullptr;
char const* g_note = nullptr;

extern "C" void earlier_handler(int sig, siginfo_t*, void*) {
  int const fd = ::open(g_note, O_CREAT | O_WRONLY | O_TRUNC, 0644);
  char const c = ::access(g_temp, F_OK) == 0 ? 'S' : 'G';  // temporary still there / gone
  if (fd >= 0) {
    (void)!::write(fd, &c, 1);
    ::close(fd);
  }
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

struct AtomicOutputSignals : ::testing::Test {
  std::string dir;
  void SetUp() override {
    ::testing::FLAGS_gtest_death_test_style = "threadsafe";  // a fresh process per case
    dir = kspecter::test::scratch_dir();
  }
};

TEST_F(AtomicOutputSignals, sigterm_removes_the_temporary_then_runs_the_handler_found) {
  std::string const note = dir + "/note";
  std::string const out_path = dir + "/out.fits";
  EXPECT_EXIT(
      {
        struct sigaction sa {};
        sa.sa_sigaction = earlier_handler;
        sa.sa_flags = SA_SIGINFO;
        ::sigaction(SIGTERM, &sa, nullptr);
        AtomicOutput out(out_path);
        static std::string temp;
        temp = out.temp_path();
        g_temp = temp.c_str();
        g_note = note.c_str();
        create_empty(out);
        require(fs::exists(temp), "the temporary was not created");
        ::raise(SIGTERM);
        std::_Exit(0);  // not reached: the earlier handler dies of the signal
      },
      ::testing::KilledBySignal(SIGTERM), "");
  std::ifstream in(note);
  std::string seen;
  in >> seen;
  EXPECT_EQ(seen, "G") << "the earlier handler did not run after the temporary was removed";
  EXPECT_EQ(temporaries(dir), 0);
  EXPECT_FALSE(fs::exists(out_path));
}

TEST_F(AtomicOutputSignals, default_action_dies_of_the_signal_without_the_temporary) {
  std::string const out_path = dir + "/out.h5";
  for (int sig : {SIGTERM, SIGINT, SIGHUP}) {
    EXPECT_EXIT(
        {
          ::signal(sig, SIG_DFL);
          AtomicOutput out(out_path);
          create_empty(out);
          ::raise(sig);
          std::_Exit(0);
        },
        ::testing::KilledBySignal(sig), "");
    EXPECT_EQ(temporaries(dir), 0) << "signal " << sig;
  }
}

// A handler found installed that takes its time before dying (the process keeps running
// meanwhile, and with it a writer that is creating its temporary).
extern "C" void slow_earlier_handler(int sig) {
  timespec const t{0, 600 * 1000 * 1000};
  ::nanosleep(&t, nullptr);
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

TEST_F(AtomicOutputSignals, a_signal_during_creation_waits_for_the_file_and_removes_it) {
  std::string const out_path = dir + "/slow.fits";
  EXPECT_EXIT(
      {
        ::signal(SIGTERM, slow_earlier_handler);
        std::atomic<bool> inside{false};
        std::thread writer([&] {
          AtomicOutput out(out_path);
          out.create([&](char const* temp) {
            inside = true;
            // A slow file system: the signal comes before the file exists, and the process
            // is still alive when it does.
            std::this_thread::sleep_for(std::chrono::milliseconds(300));
            ::close(::open(temp, O_CREAT | O_WRONLY | O_TRUNC, 0644));
          });
          for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));  // writing...
        });
        while (!inside) std::this_thread::yield();
        ::kill(::getpid(), SIGTERM);  // the writer blocks it: another thread takes it
        for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
      },
      ::testing::KilledBySignal(SIGTERM), "");
  EXPECT_EQ(temporaries(dir), 0) << "the temporary created during the signal survived it";
}

extern "C" void carry_on_handler(int) {}

TEST_F(AtomicOutputSignals, a_program_that_carries_on_starts_no_new_output) {
  std::string const first = dir + "/first.fits", second = dir + "/second.fits";
  EXPECT_EXIT(
      {
        ::signal(SIGTERM, carry_on_handler);  // the program's own: it finishes, then exits
        AtomicOutput a(first);
        create_empty(a);
        ::raise(SIGTERM);
        require(!fs::exists(a.temp_path()), "the temporary in flight was not removed");
        bool commit_failed = false;
        try {
          a.commit();
        } catch (kspecter::InputError const&) {
          commit_failed = true;
        }
        require(commit_failed, "the output in flight was committed after the signal");
        AtomicOutput b(second);
        bool refused = false;
        try {
          create_empty(b);
        } catch (kspecter::InputError const& e) {
          refused = std::string(e.what()).find("termination signal") != std::string::npos;
        }
        require(refused, "a new output was started after the signal");
        std::_Exit(0);
      },
      ::testing::ExitedWithCode(0), "");
  EXPECT_FALSE(fs::exists(first));
  EXPECT_FALSE(fs::exists(second));
  EXPECT_EQ(temporaries(dir), 0);
}

TEST_F(AtomicOutputSignals, an_ignored_signal_stays_ignored) {
  std::string const out_path = dir + "/kept.fits";
  EXPECT_EXIT(
      {
        ::signal(SIGHUP, SIG_IGN);  // nohup
        AtomicOutput out(out_path);
        create_empty(out);
        ::raise(SIGHUP);
        require(fs::exists(out.temp_path()), "SIGHUP removed the temporary of a nohup run");
        out.commit();
        std::_Exit(0);
      },
      ::testing::ExitedWithCode(0), "");
  EXPECT_TRUE(fs::exists(out_path));
  EXPECT_EQ(temporaries(dir), 0);
}

// Issue 36, class 9: SIGPIPE (a log reader gone, `| head`) does not kill the run, and SIGXFSZ
// (`ulimit -f`) makes the write fail with EFBIG instead of killing it with the temporary left.
TEST_F(AtomicOutputSignals, sigpipe_and_sigxfsz_fail_writes_instead_of_killing) {
  std::string const out_path = dir + "/big.fits";
  EXPECT_EXIT(
      {
        ::signal(SIGPIPE, SIG_DFL);
        ::signal(SIGXFSZ, SIG_DFL);
        auto out = std::make_unique<AtomicOutput>(out_path);
        create_empty(*out);
        ::raise(SIGPIPE);
        int fds[2];
        require(::pipe(fds) == 0, "pipe");
        ::close(fds[0]);
        require(::write(fds[1], "x", 1) < 0 && errno == EPIPE, "no EPIPE from a closed pipe");
        rlimit lim;
        lim.rlim_cur = lim.rlim_max = 4096;
        require(::setrlimit(RLIMIT_FSIZE, &lim) == 0, "setrlimit");
        int const fd = ::open(out->temp_path().c_str(), O_WRONLY);
        std::string const block(8192, 'x');
        ssize_t const n = ::write(fd, block.data(), block.size());
        ssize_t const m = ::write(fd, block.data(), block.size());
        require(n == 4096 && m < 0 && errno == EFBIG, "no EFBIG past the limit");
        require(kspecter::io::file_size_limit_reached(), "SIGXFSZ was not noted");
        ::close(fd);
        out.reset();  // the failed write's temporary goes, as after any failed write
        std::_Exit(0);
      },
      ::testing::ExitedWithCode(0), "");
  EXPECT_EQ(temporaries(dir), 0);
}

// Class 10: two writers of one output with the same host and PID (each PID 1 of its own PID
// namespace, or two threads) get different temporaries.
TEST(AtomicOutputNames, writers_of_one_host_and_pid_get_different_temporaries) {
  std::string const dir = kspecter::test::scratch_dir();
  AtomicOutput a(dir + "/out.fits"), b(dir + "/out.fits");
  EXPECT_NE(a.temp_path(), b.temp_path());
  create_empty(a);
  create_empty(b);
  EXPECT_TRUE(fs::exists(a.temp_path()));
  EXPECT_TRUE(fs::exists(b.temp_path())) << "the second writer's sweep removed the first's";
}

// Class 12: every legal name (up to 255 bytes) gets a temporary whose name is legal too.
TEST(AtomicOutputNames, the_longest_names_get_temporaries_that_fit) {
  std::string const dir = kspecter::test::scratch_dir();
  for (std::size_t length : {1, 180, 189, 190, 241, 255}) {
    std::string const target = dir + "/" + std::string(length, 'n');
    AtomicOutput out(target);
    EXPECT_LE(fs::path(out.temp_path()).filename().string().size(), 255u) << length;
    create_empty(out);
    out.commit();
    EXPECT_TRUE(fs::is_regular_file(target)) << length;
  }
  EXPECT_THROW(AtomicOutput(dir + "/" + std::string(256, 'n')), kspecter::InputError);
  EXPECT_EQ(temporaries(dir), 0);
}

// Classes 3 and 7: no output over something that is not a regular file, and no empty name.
TEST(AtomicOutputNames, non_regular_targets_and_empty_names_are_refused) {
  std::string const dir = kspecter::test::scratch_dir();
  ASSERT_EQ(::mkfifo((dir + "/fifo").c_str(), 0644), 0);
  fs::create_directory(dir + "/folder");
  for (std::string const& p :
       {dir + "/fifo", dir + "/folder", std::string("/dev/null"), std::string(""), dir + "/"})
    EXPECT_THROW(AtomicOutput{p}, kspecter::InputError) << p;
  EXPECT_TRUE(fs::is_fifo(dir + "/fifo"));
  EXPECT_TRUE(fs::is_character_file("/dev/null"));
  EXPECT_EQ(temporaries(dir), 0);
}

}  // namespace
