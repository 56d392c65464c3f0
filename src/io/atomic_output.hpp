// Writing outputs under a temporary name and renaming them into place, so a reader never
// sees a half-written file and a failed write leaves the previous file untouched.
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
  bool committed_ = false;
};

}  // namespace kspecter::io
