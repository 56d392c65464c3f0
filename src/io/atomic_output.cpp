#include "atomic_output.hpp"

#include <kspecter/core/error.hpp>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <unistd.h>

namespace kspecter::io {

AtomicOutput::AtomicOutput(std::string final_path) : final_(std::move(final_path)) {
  namespace fs = std::filesystem;
  fs::path const p(final_);
  fs::path const dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
  if (!fs::is_directory(dir))
    throw InputError(final_, "", "cannot write: folder '" + dir.string() + "' does not exist");
  // Same folder, so the rename is atomic; pid in the name keeps concurrent writers apart.
  temp_ = (dir / ("." + p.filename().string() + ".tmp." + std::to_string(::getpid()))).string();
  std::remove(temp_.c_str());
}

AtomicOutput::~AtomicOutput() {
  if (!committed_) std::remove(temp_.c_str());
}

void AtomicOutput::commit() {
  if (std::rename(temp_.c_str(), final_.c_str()) != 0)
    throw InputError(final_, "", std::string("cannot rename the finished output into place: ") +
                                     std::strerror(errno));
  committed_ = true;
}

}  // namespace kspecter::io
