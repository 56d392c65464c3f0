#include "atomic_output.hpp"

#include <kspecter/core/error.hpp>

#include <pthread.h>
#include <signal.h>
#include <unistd.h>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <mutex>
#include <random>

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
std::atomic<bool> terminating{false};     // a termination signal has arrived
std::atomic<bool> file_too_large{false};  // SIGXFSZ has arrived: a write failed with EFBIG
std::atomic<int> creating{0};             // threads inside AtomicOutput::create
struct sigaction previous_action[NSIG];   // what each signal did before our handler
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

// SIGXFSZ: a write went past the file size limit (ulimit -f). Its default action kills the
// process (leaving the temporaries); handled, the write fails with EFBIG instead, the writer
// throws, and the temporary is removed as for any failed write.
extern "C" void note_file_too_large(int) { file_too_large.store(true); }

void install_signal_handlers() {
  static std::once_flag once;
  std::call_once(once, [] {
    // SIGPIPE (a reader of stdout or stderr went away, `| head`) would kill the run in the
    // middle of a write: ignored, a write to the closed pipe fails with EPIPE instead.
    struct sigaction old {};
    if (::sigaction(SIGPIPE, nullptr, &old) == 0 && !(old.sa_flags & SA_SIGINFO) &&
        old.sa_handler == SIG_DFL)
      ::signal(SIGPIPE, SIG_IGN);
    if (::sigaction(SIGXFSZ, nullptr, &old) == 0 && !(old.sa_flags & SA_SIGINFO) &&
        old.sa_handler == SIG_DFL) {
      struct sigaction sa {};
      sa.sa_handler = note_file_too_large;
      sa.sa_flags = SA_RESTART;
      sigemptyset(&sa.sa_mask);
      ::sigaction(SIGXFSZ, &sa, nullptr);
    }
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

// 64 random bits as 16 hex digits, fresh for every temporary: two writers that are each PID 1
// of their own PID namespace on one host (containers), or two threads of one process writing
// the same output, still get different temporaries.
std::string random_tag() {
  std::uint64_t bits = 0;
  try {
    std::random_device rd;  // getrandom(2) or /dev/urandom
    bits = (std::uint64_t(rd()) << 32) ^ rd();
  } catch (...) {
  }
  static std::atomic<std::uint64_t> counter{0};  // should the device fail: still unique here
  timespec t{};
  ::clock_gettime(CLOCK_REALTIME, &t);
  bits ^= (std::uint64_t(t.tv_nsec) + counter.fetch_add(1)) * 0x9E3779B97F4A7C15ull ^
          std::uint64_t(t.tv_sec);
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(bits));
  return buf;
}

// The output's file name as it appears in its temporary's: whole when the temporary's name
// fits NAME_MAX (255 bytes), else its first bytes and a hash of the whole, so that every
// name the file system takes can be written.
std::string name_in_temp(std::string const& name, std::size_t room) {
  if (name.size() <= room) return name;
  std::uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a
  for (unsigned char c : name) h = (h ^ c) * 0x100000001b3ull;
  char buf[18];
  std::snprintf(buf, sizeof buf, "~%016llx", static_cast<unsigned long long>(h));
  return name.substr(0, room - 17) + buf;
}

// Removes ".NAME.tmp.HOST.PID.TAG" (and ".NAME.tmp.HOST.PID" of older versions) left in
// `dir` by processes of this host that no longer exist (killed while writing). Best effort:
// a folder that cannot be listed is left as it is.
void remove_stale_temps(std::filesystem::path const& dir, std::string const& prefix) {
  namespace fs = std::filesystem;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::string const name = it->path().filename().string();
    if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) continue;
    std::string pid_text = name.substr(prefix.size());
    if (auto const dot = pid_text.find('.'); dot != std::string::npos) {
      std::string const tag = pid_text.substr(dot + 1);
      if (tag.size() != 16 || tag.find_first_not_of("0123456789abcdef") != std::string::npos)
        continue;
      pid_text.resize(dot);
    }
    if (pid_text.find_first_not_of("0123456789") != std::string::npos || pid_text.size() > 9)
      continue;
    pid_t const pid = static_cast<pid_t>(std::stol(pid_text));
    if (pid == ::getpid()) continue;                      // ours, being written by another thread
    if (::kill(pid, 0) == 0 || errno != ESRCH) continue;  // alive (or not ours to judge)
    std::error_code rm;
    fs::remove(it->path(), rm);
  }
}

}  // namespace

bool file_size_limit_reached() { return file_too_large.load(); }

void install_output_signal_handlers() { install_signal_handlers(); }

void check_output_path(std::string const& path) {
  namespace fs = std::filesystem;
  if (path.empty()) throw InputError("''", "", "cannot write: the output name is empty");
  fs::path const p(path);
  if (!p.has_filename() || p.filename() == "." || p.filename() == "..")
    throw InputError(path, "", "cannot write: the name ends in a folder, not a file name");
  if (p.filename().string().size() > 255)
    throw InputError(path, "",
                     "cannot write: the file name has " +
                         std::to_string(p.filename().string().size()) +
                         " bytes, more than the 255 a file system takes");
  fs::path const dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw InputError(path, "", "cannot write: folder '" + dir.string() + "' does not exist");
  // The rename would replace whatever is there: only a regular file (or a link to one, which
  // the rename replaces, leaving its target alone) may be.
  auto const st = fs::status(p, ec);
  if (!ec && fs::exists(st) && !fs::is_regular_file(st)) {
    char const* what = fs::is_directory(st)        ? "a folder"
                       : fs::is_character_file(st) ? "a character device"
                       : fs::is_block_file(st)     ? "a block device"
                       : fs::is_fifo(st)           ? "a named pipe (FIFO)"
                       : fs::is_socket(st)         ? "a socket"
                                                   : "not a regular file";
    throw InputError(path, "",
                     std::string("cannot write: it exists and is ") + what +
                         ", which an output would replace; only regular files are overwritten");
  }
}

bool same_output_file(std::string const& a, std::string const& b) {
  namespace fs = std::filesystem;
  if (a == b) return true;
  std::error_code ec1, ec2;
  if (fs::exists(a, ec1) && fs::exists(b, ec2)) return fs::equivalent(a, b, ec1) && !ec1;
  // One at least does not exist yet: compare the folders (resolved) and the names.
  auto resolved = [](std::string const& s) {
    fs::path const p(s);
    std::error_code ec;
    fs::path const dir = fs::weakly_canonical(
        fs::absolute(p.has_parent_path() ? p.parent_path() : fs::path("."), ec), ec);
    return (dir / p.filename()).lexically_normal();
  };
  return resolved(a) == resolved(b);
}

AtomicOutput::AtomicOutput(std::string final_path) : final_(std::move(final_path)) {
  namespace fs = std::filesystem;
  check_output_path(final_);
  fs::path const p(final_);
  fs::path const dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
  // Same folder, so the rename is atomic; host, pid and a random tag in the name keep
  // concurrent writers apart (PID namespaces included) and tell a stale temporary from a
  // live one. 1 + 5 + 32 (host) + 1 + 10 (pid) + 1 + 16 (tag) bytes around the name.
  std::string host = host_tag();
  if (host.size() > 32) host.resize(32);
  std::string const name = name_in_temp(p.filename().string(), 255 - 66);
  std::string const prefix = "." + name + ".tmp." + host + ".";
  temp_ = (dir / (prefix + std::to_string(::getpid()) + "." + random_tag())).string();
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
