// Writing outputs under a temporary name and renaming them into place, so a reader never
// sees a half-written file and a failed or interrupted write leaves the previous file
// untouched.
//
// The temporary is ".NAME.tmp.HOST.PID" in the output's folder (same file system: the rename
// is atomic). What becomes of it:
//   - the write fails (exception): the destructor removes it;
//   - the process gets SIGTERM, SIGINT or SIGHUP: a handler removes every temporary still
//     being written, then passes the signal on to the disposition it found: the default
//     (the process dies of the signal, as it would have) or a handler installed before
//     (the CUDA driver installs its own for most fatal signals when it starts; a program
//     may have one). The handlers are installed with the first AtomicOutput; a signal that
//     is ignored (nohup) stays ignored. Once such a signal has come, no new temporary is
//     created (create() throws), so a process that goes on leaves none behind either;
//   - the process is killed outright (SIGKILL, power loss): the temporary stays. The next
//     AtomicOutput for the same output on the same host removes every ".NAME.tmp.HOST.PID"
//     whose process is gone; those of other hosts (a shared file system) are left to them.
#pragma once

#include <signal.h>

#include <string>

namespace kspecter::io {

/// Owns a temporary path next to `final_path`; commit() renames it over the final path,
/// and the destructor removes it if commit() was never reached.
class AtomicOutput {
 public:
  explicit AtomicOutput(std::string final_path);
  ~AtomicOutput();
  AtomicOutput(AtomicOutput const&) = delete;
  AtomicOutput& operator=(AtomicOutput const&) = delete;

  std::string const& temp_path() const { return temp_; }

  /// Creates the temporary: calls `make(temp_path().c_str())`, which must create the file
  /// (fits_create_diskfile, H5Fcreate). A termination signal arriving meanwhile waits until
  /// the file exists, so that its handler finds and removes it; after one has arrived, throws
  /// InputError instead of calling `make`.
  template <class Make>
  void create(Make&& make) {
    CreationScope const scope(final_);
    make(temp_.c_str());
  }

  void commit();

 private:
  // Blocks the termination signals on this thread and counts it among the threads creating
  // a temporary, which the signal handler waits for.
  class CreationScope {
   public:
    explicit CreationScope(std::string const& final_path);
    ~CreationScope();
    CreationScope(CreationScope const&) = delete;
    CreationScope& operator=(CreationScope const&) = delete;

   private:
    sigset_t saved_mask_;
  };

  std::string final_, temp_;
  int slot_ = -1;  // where the signal handler finds temp_ (-1: not registered)
  bool committed_ = false;
};

}  // namespace kspecter::io
