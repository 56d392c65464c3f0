// Writing outputs under a temporary name and renaming them into place, so a reader never
// sees a half-written file and a failed or interrupted write leaves the previous file
// untouched.
//
// The temporary is ".NAME.tmp.HOST.PID.TAG" in the output's folder (same file system: the
// rename is atomic), TAG 16 random hex digits drawn for each temporary (two processes that are
// each PID 1 of their own PID namespace differ there); a NAME too long for the temporary's
// name to fit 255 bytes is cut and a hash of it added. What becomes of it:
//   - the write fails (exception): the destructor removes it;
//   - the process gets SIGTERM, SIGINT or SIGHUP: a handler removes every temporary still
//     being written, then passes the signal on to the disposition it found: the default
//     (the process dies of the signal, as it would have) or a handler installed before
//     (the CUDA driver installs its own for most fatal signals when it starts; a program
//     may have one). The handlers are installed with the first AtomicOutput; a signal that
//     is ignored (nohup) stays ignored. Once such a signal has come, no new temporary is
//     created (create() throws), so a process that goes on leaves none behind either;
//   - SIGPIPE (found at its default) is ignored: a write to a closed pipe (stdout or stderr
//     read by `| head`) fails with EPIPE instead of killing the run; SIGXFSZ (found at its
//     default) is caught: a write past `ulimit -f` fails with EFBIG, the writer throws an
//     error naming the file (file_size_limit_reached() says why) and the temporary goes;
//   - the process is killed outright (SIGKILL, power loss): the temporary stays. The next
//     AtomicOutput for the same output on the same host removes every ".NAME.tmp.HOST.PID"
//     whose process is gone; those of other hosts (a shared file system) are left to them.
#pragma once

#include <kspecter/io/output_path.hpp>

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
