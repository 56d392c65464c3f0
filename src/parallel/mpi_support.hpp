// parallel/'s own view of a Communicator as an MPI_Comm (only in builds with MPI).
#pragma once

#ifdef KSPECTER_HAVE_MPI
#include <kspecter/parallel/communicator.hpp>

#include <mpi.h>

namespace kspecter::parallel::detail {

/// The communicator's MPI_Comm; MPI_COMM_NULL when MPI is not in use (one rank, no calls).
inline MPI_Comm mpi_comm(Communicator const& c) {
  void const* p = c.native();
  return p ? *static_cast<MPI_Comm const*>(p) : MPI_COMM_NULL;
}

}  // namespace kspecter::parallel::detail
#endif
