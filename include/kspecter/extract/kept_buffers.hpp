// Device memory that extract_frame keeps from one frame for the next (ExtractHooks::buffers).
#pragma once

#include <cstddef>
#include <memory>
#include <typeindex>
#include <typeinfo>
#include <utility>

namespace kspecter::extract {

/// The device buffers of the last frame extracted with it: on a GPU about 2 GB for a full
/// frame (the frame's arrays, the batch buffers, the inverse square root's workspace); on a
/// host backend the batch buffers only, since its frame arrays are the result's own vectors.
/// The next frame of the same sizes on the same backend takes them as they are, so that a
/// process that extracts many frames (or a rank that extracts one share of each) allocates
/// and frees them once, not once a frame: on a GPU cudaMalloc and cudaFree, on a host the
/// page faults of first touch and the unmapping. A frame of other sizes frees them before it
/// allocates its own. The numbers of a frame do not depend on whether its buffers were kept.
/// Not thread-safe: one per thread that extracts.
class KeptBuffers {
 public:
  /// Frees what is held now.
  void release() {
    held_.reset();
    type_ = typeid(void);
    bytes_ = 0;
  }
  /// Whether buffers are held.
  bool empty() const { return !held_; }
  /// Device bytes held.
  std::size_t bytes() const { return bytes_; }

  /// For extract_frame: takes what is held if it is a W, else frees it and returns null.
  template <class W>
  std::shared_ptr<W> take() {
    std::shared_ptr<W> w;
    if (held_ && type_ == std::type_index(typeid(W))) w = std::static_pointer_cast<W>(held_);
    release();
    return w;
  }
  /// For extract_frame: holds `w` (device bytes `bytes`) for the next frame.
  template <class W>
  void keep(std::shared_ptr<W> w, std::size_t bytes) {
    held_ = std::move(w);
    type_ = typeid(W);
    bytes_ = bytes;
  }

 private:
  std::shared_ptr<void> held_;
  std::type_index type_ = typeid(void);
  std::size_t bytes_ = 0;
};

}  // namespace kspecter::extract
