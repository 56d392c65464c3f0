// Writing outputs under a temporary name and renaming them into place, so a reader never
// sees a half-written file and a failed or interrupted write leaves the previous file
// untouched.
//
// The temporary is ".NAME.tmp.HOST.PID" in the output's folder (same file system: the rename
// is atomic). What becomes of it:
//   - the write fails (exception): the destructor removes it;
//   - the process gets SIGTERM, SIGINT or SIGHUP: a handler removes every temporary still
//     being written and the process then dies of that signal as it would have (the handlers
//     are installed with the first AtomicOutput, only for signals still at their default
//     action: a program's own handlers are left alone);
//   - the process is killed outright (SIGKILL, power loss): the temporary stays. The next
//     AtomicOutput for the same output on the same host removes every ".NAME.tmp.HOST.PID"
//     whose process is gone; those of other hosts (a shared file system) are left to them.
#pragma once

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
  void commit();

 private:
  std::string final_, temp_;
  int slot_ = -1;  // where the signal handler finds temp_ (-1: not registered)
  bool committed_ = false;
};

}  // namespace kspecter::io
