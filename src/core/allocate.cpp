#include <kspecter/core/byte_size.hpp>

#include <kspecter/core/allocate.hpp>

#include <utility>

namespace kspecter {

OutOfMemory::OutOfMemory(std::string label, std::size_t bytes, std::string const& cause)
    : label_(std::move(label)), bytes_(bytes) {
  what_ = "could not allocate " + byte_size(bytes_) + " for " + label_ + " (" +
          cause.substr(0, cause.find('\n')) + ")";
}

}  // namespace kspecter
