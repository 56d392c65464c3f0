// The process environment of a kspecter run: MPI (when built with it) and Kokkos, brought up
// and torn down in the right order, with the GPU chosen from the node-local rank.
#pragma once

#include <string>
#include <vector>

namespace kspecter::parallel {

/// The most host threads a rank runs (Kokkos 3.4's OpenMP pool crashes beyond 516). Every way
/// a count reaches Kokkos is held to it by Environment: --threads and Python's threads,
/// --kokkos-threads and --kokkos-num-threads beyond it are a ParameterError naming the
/// setting; OMP_NUM_THREADS beyond it, or a rank allowed more CPUs, run this many threads
/// with a warning.
inline constexpr int max_host_threads = 512;

struct EnvironmentOptions {
  int num_threads = -1;  // host threads per rank; -1: OMP_NUM_THREADS when set, else the
                         // cores this rank may use, shared among the node's unbound ranks
  int device_id = -1;    // GPU ordinal; -1: node-local rank modulo the GPUs on the node
  bool mpi = true;       // false: a single-process tool that never needs MPI (size 1).
                         // true: MPI starts when a launcher started this process
                         // (started_by_launcher); a process started by hand runs alone.
  std::vector<std::string> kokkos_args;  // --kokkos-* flags for Kokkos, as the user gave them
};

/// This process's rank as the launcher (mpiexec, srun) announces it in the environment, 0
/// when none does. Known before MPI is up: lets one process of a job speak for all of them
/// about errors every rank sees alike (bad arguments).
int launcher_rank();

/// The number of processes the launcher started, as it announces it in the environment; 1
/// when none did.
int launcher_size();

/// True when mpiexec, mpirun or srun started this process (their rank variable is set).
bool started_by_launcher();

/// The CPUs a rank may use: its affinity mask when the launcher bound it (or it is alone on
/// the node), else the node's CPUs shared between its `local_size` ranks; at least 1. The
/// host threads of a rank given none, and its gzip threads (io::GzipSettings::threads).
int cpus_per_rank(int local_size);

/// RAII owner of MPI_Init/MPI_Finalize and Kokkos::initialize/finalize. One per process.
class Environment {
 public:
  Environment(int& argc, char**& argv, EnvironmentOptions const& opt = {});
  ~Environment();
  Environment(Environment const&) = delete;
  Environment& operator=(Environment const&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  int local_rank() const { return local_rank_; }
  int local_size() const { return local_size_; }
  bool mpi_enabled() const;

  /// Finalizes Kokkos now and, on a CUDA build, destroys the device's context
  /// (cudaDeviceReset), so that the driver's teardown of the context overlaps what the host
  /// still does (a frame's write) instead of following the process's last line. Nothing of
  /// Kokkos may be used after it; MPI stays up. Does nothing under MPI (a CUDA-aware MPI may
  /// hold the context until MPI_Finalize).
  void release_device();

  /// Ends every rank of the job with `code` (MPI_Abort under MPI, std::exit otherwise).
  [[noreturn]] static void abort(int code);

 private:
  int rank_ = 0, size_ = 1, local_rank_ = 0, local_size_ = 1;
  bool we_initialized_mpi_ = false;
};

}  // namespace kspecter::parallel
