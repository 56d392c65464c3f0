// A kspecter run as a child process the test can signal: started with posix_spawn (its
// output into a log file), killed by pid, reaped with its exit status or signal.
#pragma once

#include <test_data.hpp>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <cerrno>
#include <csignal>
#include <stdexcept>
#include <string>
#include <vector>

extern char** environ;

namespace kspecter::test {

class ChildProcess {
 public:
  /// Starts `argv[0]` with `argv`, stdout and stderr into `log`.
  ChildProcess(std::vector<std::string> const& argv, std::string log) : log_(std::move(log)) {
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, log_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    // Default dispositions and no blocked signals, whatever the test runner set (a shell
    // running it in the background ignores SIGINT, and children inherit that).
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    sigset_t none, defaults;
    sigemptyset(&none);
    sigemptyset(&defaults);
    for (int s : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&defaults, s);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setsigdefault(&attr, &defaults);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    std::vector<char*> args;
    for (auto const& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    int const rc = posix_spawn(&pid_, args[0], &fa, &attr, args.data(), environ);
    posix_spawnattr_destroy(&attr);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) throw std::runtime_error("cannot start " + argv[0]);
  }
  ~ChildProcess() {
    if (!reaped_) {
      ::kill(pid_, SIGKILL);
      wait();
    }
  }
  ChildProcess(ChildProcess const&) = delete;
  ChildProcess& operator=(ChildProcess const&) = delete;

  pid_t pid() const { return pid_; }
  void signal(int sig) const {
    if (!reaped_) ::kill(pid_, sig);
  }
  /// True once the child has ended (reaps it without blocking).
  bool finished() {
    if (reaped_) return true;
    int st = 0;
    if (::waitpid(pid_, &st, WNOHANG) == pid_) record(st);
    return reaped_;
  }
  /// Waits for the end.
  void wait() {
    if (reaped_) return;
    int st = 0;
    while (::waitpid(pid_, &st, 0) < 0 && errno == EINTR) {
    }
    record(st);
  }
  bool exited() const { return exited_; }
  int exit_code() const { return exit_code_; }
  bool killed_by(int sig) const { return term_signal_ == sig; }
  int term_signal() const { return term_signal_; }
  std::string output() const { return file_bytes(log_); }

 private:
  void record(int st) {
    reaped_ = true;
    exited_ = WIFEXITED(st);
    exit_code_ = exited_ ? WEXITSTATUS(st) : -1;
    term_signal_ = WIFSIGNALED(st) ? WTERMSIG(st) : 0;
  }
  std::string log_;
  pid_t pid_ = -1;
  bool reaped_ = false, exited_ = false;
  int exit_code_ = -1, term_signal_ = 0;
};

}  // namespace kspecter::test
