#include "atomic_output.hpp"

#include <kspecter/core/error.hpp>

#include <pthread.h>
#include <signal.h>
#include <unistd.h>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <mutex>

namespace kspecter::io {

namespace {

// ---------------------------------------------------------------- temporaries in flight
// Fixed slots, so that the signal handler reads them without locks or allocation (only
// async-signal-safe calls there). A slot is claimed (1), filled, then published (2).
constexpr int slot_count = 64;
constexpr std::size_t slot_path_max = 4096;
struct Slot {
  std::atomic<int> state{0};
  char path[slot_path_max];
};
Slot slots[slot_count];
static_assert(std::atomic<int>::is_always_lock_free, "the signal handler needs lock-free atomics");

int register_temp(std::string const& path) {
  if (path.size() >= slot_path_max) return -1;
  for (int i = 0; i < slot_count; ++i) {
    int expected = 0;
    if (slots[i].state.compare_exchange_strong(expected, 1)) {
      std::memcpy(slots[i].path, path.c_str(), path.size() + 1);
      slots[i].state.store(2, std::memory_order_release);
      return i;
    }
  }
  return -1;  // more outputs in flight than slots: a kill leaves it to the stale-file sweep
}

void unregister_temp(int slot) {
  if (slot >= 0) slots[slot].state.store(0, std::memory_order_release);
}

// ---------------------------------------------------------------- termination signals
int const termination_signals[] = {SIGTERM, SIGINT, SIGHUP};
std::atomic<bool> terminating{false};    // a termination signal has arrived
std::atomic<int> creating{0};            // threads inside AtomicOutput::create
struct sigaction previous_action[NSIG];  // what each signal did before our handler
static_assert(std::atomic<bool>::is_always_lock_free, "the signal handler needs lock-free atomics");

void termination_set(sigset_t* set) {
  sigemptyset(set);
  for (int s : termination_signals) sigaddset(set, s);
}

// Until the threads creating a temporary are done (they block these signals meanwhile, so
// none of them runs this handler), or 5 s, for a file system that hangs.
void wait_for_creations() {
  timespec t0{}, t{};
  timespec const pause{0, 1000 * 1000};  // 1 ms: a creation takes that order, and no core spins
  ::clock_gettime(CLOCK_MONOTONIC, &t0);
  while (creating.load() > 0) {
    ::clock_gettime(CLOCK_MONOTONIC, &t);
    if (t.tv_sec - t0.tv_sec > 5) break;
    ::nanosleep(&pause, nullptr);
  }
}

// Only async-signal-safe calls here.
extern "C" void remove_temps_and_pass_on(int sig, siginfo_t* info, void* context) {
  int const saved = errno;
  terminating.store(true);
  wait_for_creations();
  for (auto& s : slots)
    if (s.state.load(std::memory_order_acquire) == 2) ::unlink(s.path);
  struct sigaction const& prev = previous_action[sig];
  if (prev.sa_flags & SA_SIGINFO) {
    if (prev.sa_sigaction) prev.sa_sigaction(sig, info, context);
  } else if (prev.sa_handler != SIG_DFL && prev.sa_handler != SIG_IGN) {
    prev.sa_handler(sig);
  } else {
    // Die of the same signal, as the default action would have: the exit status tells the
    // caller what happened. The signal is blocked inside the handler, so it is delivered on
    // return, with the default action restored.
    ::signal(sig, SIG_DFL);
    ::raise(sig);
  }
  errno = saved;
}

void install_signal_handlers() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (int sig : termination_signals) {
      struct sigaction old {};
      if (::sigaction(sig, nullptr, &old) != 0) continue;
      if (!(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_IGN) continue;  // nohup
      previous_action[sig] = old;
      struct sigaction sa {};
      sa.sa_sigaction = remove_temps_and_pass_on;
      sa.sa_flags = SA_SIGINFO | SA_RESTART | (old.sa_flags & SA_ONSTACK);
      termination_set(&sa.sa_mask);  // one cleanup at a time
      ::sigaction(sig, &sa, nullptr);
    }
  });
}

// ---------------------------------------------------------------- names

// The host name as it may appear in a file name (letters, digits, '-').
std::string host_tag() {
  char buf[256] = {0};
  if (::gethostname(buf, sizeof buf - 1) != 0 || !buf[0]) return "host";
  std::string h = buf;
  for (auto& c : h)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-') c = '-';
  return h;
}

// Removes ".NAME.tmp.HOST.PID" left in `dir` by processes of this host that no longer exist
// (killed while writing). Best effort: a folder that cannot be listed is left as it is.
void remove_stale_temps(std::filesystem::path const& dir, std::string const& prefix) {
  namespace fs = std::filesystem;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::string const name = it->path().filename().string();
    if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) continue;
    std::string const pid_text = name.substr(prefix.size());
    if (pid_text.find_first_not_of("0123456789") != std::string::npos || pid_text.size() > 9)
      continue;
    pid_t const pid = static_cast<pid_t>(std::stol(pid_text));
    if (pid == ::getpid()) continue;
    if (::kill(pid, 0) == 0 || errno != ESRCH) continue;  // alive (or not ours to judge)
    std::error_code rm;
    fs::remove(it->path(), rm);
  }
}

}  // namespace

AtomicOutput::AtomicOutput(std::string final_path) : final_(std::move(final_path)) {
  namespace fs = std::filesystem;
  fs::path const p(final_);
  fs::path const dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
  if (!fs::is_directory(dir))
    throw InputError(final_, "", "cannot write: folder '" + dir.string() + "' does not exist");
  // Same folder, so the rename is atomic; host and pid in the name keep concurrent writers
  // apart and tell a stale temporary from a live one.
  std::string const prefix = "." + p.filename().string() + ".tmp." + host_tag() + ".";
  temp_ = (dir / (prefix + std::to_string(::getpid()))).string();
  remove_stale_temps(dir, prefix);
  std::remove(temp_.c_str());
  install_signal_handlers();
  slot_ = register_temp(temp_);  // before anything creates the file
}

AtomicOutput::CreationScope::CreationScope(std::string const& final_path) {
  sigset_t block;
  termination_set(&block);
  ::pthread_sigmask(SIG_BLOCK, &block, &saved_mask_);
  // With the handler's store to `terminating` and load of `creating` (both sequentially
  // consistent): either the handler waits for this creation, or this sees the signal.
  creating.fetch_add(1);
  if (terminating.load()) {
    creating.fetch_sub(1);
    ::pthread_sigmask(SIG_SETMASK, &saved_mask_, nullptr);
    throw InputError(final_path, "", "not written: the process received a termination signal");
  }
}

AtomicOutput::CreationScope::~CreationScope() {
  creating.fetch_sub(1);
  ::pthread_sigmask(SIG_SETMASK, &saved_mask_, nullptr);  // a pending signal arrives now
}

AtomicOutput::~AtomicOutput() {
  if (!committed_) std::remove(temp_.c_str());
  unregister_temp(slot_);
}

void AtomicOutput::commit() {
  if (std::rename(temp_.c_str(), final_.c_str()) != 0)
    throw InputError(
        final_, "",
        std::string("cannot rename the finished output into place: ") + std::strerror(errno));
  committed_ = true;
  unregister_temp(slot_);
  slot_ = -1;
}

}  // namespace kspecter::io
