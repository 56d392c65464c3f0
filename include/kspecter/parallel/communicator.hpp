// A set of ranks that work together: the whole job, one rank alone, or a group of the job
// that shares one frame. Wraps an MPI communicator so that no public header needs mpi.h;
// in a build without MPI every communicator has one rank.
#pragma once

#include <memory>

namespace kspecter::parallel {

class Communicator {
 public:
  /// Every rank of the job (MPI_COMM_WORLD; one rank when MPI is off or not initialized).
  static Communicator world();
  /// This rank alone: collectives on it are local and free.
  static Communicator self();

  /// The caller's MPI communicator, given as the address of an MPI_Comm (e.g. mpi4py's): used,
  /// not duplicated and never freed; nullptr means world(). The caller keeps it alive.
  static Communicator borrow(void const* mpi_comm);

  /// A new communicator of the same ranks, whose messages never meet this one's (MPI_Comm_dup;
  /// freed with its last copy). Collective.
  Communicator duplicate() const;

  /// Splits this communicator into groups of the ranks that pass the same `color`, ordered
  /// as here. Collective over this communicator.
  Communicator split(int color) const;

  int rank() const;
  int size() const;

  /// The MPI_Comm, as the address of an object of that type (for parallel/'s own sources);
  /// nullptr when MPI is not in use.
  void const* native() const;

 private:
  struct Impl;
  explicit Communicator(std::shared_ptr<Impl> impl);
  std::shared_ptr<Impl> impl_;
};

}  // namespace kspecter::parallel
