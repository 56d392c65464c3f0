#include <kspecter/parallel/gather.hpp>

#ifdef KSPECTER_HAVE_MPI
#include <mpi.h>
#endif

namespace kspecter::parallel {

#ifdef KSPECTER_HAVE_MPI
namespace {

bool mpi_active() {
  int init = 0, fin = 0;
  MPI_Initialized(&init);
  MPI_Finalized(&fin);
  return init && !fin;
}

template <class T>
std::vector<T> gather_impl(std::vector<T> const& local, int root, MPI_Datatype type) {
  if (!mpi_active()) return local;
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int const n = static_cast<int>(local.size());
  std::vector<int> counts(size), displs(size);
  MPI_Gather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, root, MPI_COMM_WORLD);
  std::vector<T> out;
  if (rank == root) {
    int total = 0;
    for (int r = 0; r < size; ++r) {
      displs[r] = total;
      total += counts[r];
    }
    out.resize(total);
  }
  MPI_Gatherv(local.data(), n, type, out.data(), counts.data(), displs.data(), type, root,
              MPI_COMM_WORLD);
  return out;
}

}  // namespace

std::vector<double> gather_rows(std::vector<double> const& local, int root) {
  return gather_impl(local, root, MPI_DOUBLE);
}
std::vector<unsigned> gather_rows(std::vector<unsigned> const& local, int root) {
  return gather_impl(local, root, MPI_UNSIGNED);
}

std::vector<double> sum_to_root(std::vector<double> const& local, int root) {
  if (!mpi_active()) return local;
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::vector<double> out(rank == root ? local.size() : 0);
  MPI_Reduce(local.data(), out.data(), static_cast<int>(local.size()), MPI_DOUBLE, MPI_SUM, root,
             MPI_COMM_WORLD);
  return out;
}

bool any_rank(bool flag) {
  if (!mpi_active()) return flag;
  int in = flag ? 1 : 0, out = 0;
  MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
  return out != 0;
}

double max_over_ranks(double value) {
  if (!mpi_active()) return value;
  double out = value;
  MPI_Allreduce(&value, &out, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return out;
}

#else

std::vector<double> gather_rows(std::vector<double> const& local, int) { return local; }
std::vector<unsigned> gather_rows(std::vector<unsigned> const& local, int) { return local; }
std::vector<double> sum_to_root(std::vector<double> const& local, int) { return local; }
bool any_rank(bool flag) { return flag; }
double max_over_ranks(double value) { return value; }

#endif

}  // namespace kspecter::parallel
