#include <kspecter/parallel/gather.hpp>

#include "mpi_support.hpp"

namespace kspecter::parallel {

#ifdef KSPECTER_HAVE_MPI
namespace {

template <class T>
std::vector<T> gather_impl(std::vector<T> const& local, int root, Communicator const& c,
                           MPI_Datatype type) {
  MPI_Comm const comm = detail::mpi_comm(c);
  if (comm == MPI_COMM_NULL || c.size() == 1) return local;
  int const rank = c.rank(), size = c.size();
  int const n = static_cast<int>(local.size());
  std::vector<int> counts(size), displs(size);
  MPI_Gather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, root, comm);
  std::vector<T> out;
  if (rank == root) {
    int total = 0;
    for (int r = 0; r < size; ++r) {
      displs[r] = total;
      total += counts[r];
    }
    out.resize(total);
  }
  MPI_Gatherv(local.data(), n, type, out.data(), counts.data(), displs.data(), type, root, comm);
  return out;
}

}  // namespace

std::vector<double> gather_rows(std::vector<double> const& local, int root,
                                Communicator const& comm) {
  return gather_impl(local, root, comm, MPI_DOUBLE);
}
std::vector<unsigned> gather_rows(std::vector<unsigned> const& local, int root,
                                  Communicator const& comm) {
  return gather_impl(local, root, comm, MPI_UNSIGNED);
}

std::vector<double> sum_to_root(std::vector<double> const& local, int root, Communicator const& c) {
  MPI_Comm const comm = detail::mpi_comm(c);
  if (comm == MPI_COMM_NULL || c.size() == 1) return local;
  std::vector<double> out(c.rank() == root ? local.size() : 0);
  MPI_Reduce(local.data(), out.data(), static_cast<int>(local.size()), MPI_DOUBLE, MPI_SUM, root,
             comm);
  return out;
}

bool any_rank(bool flag, Communicator const& c) {
  MPI_Comm const comm = detail::mpi_comm(c);
  if (comm == MPI_COMM_NULL || c.size() == 1) return flag;
  int in = flag ? 1 : 0, out = 0;
  MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_LOR, comm);
  return out != 0;
}

double max_over_ranks(double value, Communicator const& c) {
  MPI_Comm const comm = detail::mpi_comm(c);
  if (comm == MPI_COMM_NULL || c.size() == 1) return value;
  double out = value;
  MPI_Allreduce(&value, &out, 1, MPI_DOUBLE, MPI_MAX, comm);
  return out;
}

#else

std::vector<double> gather_rows(std::vector<double> const& local, int, Communicator const&) {
  return local;
}
std::vector<unsigned> gather_rows(std::vector<unsigned> const& local, int, Communicator const&) {
  return local;
}
std::vector<double> sum_to_root(std::vector<double> const& local, int, Communicator const&) {
  return local;
}
bool any_rank(bool flag, Communicator const&) { return flag; }
double max_over_ranks(double value, Communicator const&) { return value; }

#endif

}  // namespace kspecter::parallel
