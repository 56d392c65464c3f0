#include <kspecter/core/kokkos_compat.hpp>
#include <kspecter/parallel/environment.hpp>

#ifdef KSPECTER_HAVE_MPI
#include <mpi.h>
#endif
#ifdef KOKKOS_ENABLE_CUDA
#include <cuda_runtime.h>
#endif

#include <algorithm>
#include <cstdlib>
#include <thread>
#ifdef __linux__
#include <sched.h>
#endif

namespace kspecter::parallel {

namespace {
// GPUs visible to this process, counted before Kokkos is up (so that the device can be chosen).
int visible_gpus() {
#ifdef KOKKOS_ENABLE_CUDA
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) return 0;
  return n;
#else
  return 0;
#endif
}
// Host threads for a rank that was given none: the cores it may run on (no oversubscription).
int default_threads(int local_size) {
  if (std::getenv("OMP_NUM_THREADS")) return -1;  // the user chose: Kokkos/OpenMP obey it
  return cpus_per_rank(local_size);
}
// The rank that mpiexec, mpirun (Open MPI, MPICH, Intel MPI, PMIx launchers) or srun put in
// the environment of every process they start; nullptr when none did.
char const* launcher_rank_text() {
  for (char const* var : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID"})
    if (char const* v = std::getenv(var)) return v;
  return nullptr;
}
}  // namespace

int cpus_per_rank(int local_size) {
  int const node = static_cast<int>(std::thread::hardware_concurrency());
  int allowed = node;
#ifdef __linux__
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) allowed = CPU_COUNT(&set);
#endif
  if (allowed <= 0) return 1;
  if (allowed < node || local_size <= 1) return allowed;  // bound by the launcher, or alone
  return std::max(1, allowed / local_size);
}

int launcher_rank() {
  char const* v = launcher_rank_text();
  return v ? std::atoi(v) : 0;
}

int launcher_size() {
  for (char const* var : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", "SLURM_NTASKS"})
    if (char const* v = std::getenv(var)) return std::max(1, std::atoi(v));
  return 1;
}

bool started_by_launcher() { return launcher_rank_text() != nullptr; }

Environment::Environment(int& argc, char**& argv, EnvironmentOptions const& opt) {
#ifdef KSPECTER_HAVE_MPI
  int initialized = 0;
  MPI_Initialized(&initialized);
  // A process started by hand would be an MPI world of one: its MPI start-up (a singleton's,
  // 0.6-1.1 s with Open MPI 4.1; perf/gpu_runs.md) would buy nothing.
  bool const wanted = opt.mpi && started_by_launcher();
  if (!wanted && !initialized) {
    // Nothing to coordinate: stay out of MPI (and of what its start-up does to the process),
    // but know the launcher's rank so that only one process of `mpiexec -n N` does the work.
    rank_ = launcher_rank();
  } else if (!initialized) {
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    we_initialized_mpi_ = true;
  }
  MPI_Initialized(&initialized);
  if (initialized) {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    MPI_Comm local;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &local);
    MPI_Comm_rank(local, &local_rank_);
    MPI_Comm_size(local, &local_size_);
    MPI_Comm_free(&local);
  }
#else
  (void)argc;
  (void)argv;
#endif
  compat::InitOptions k;
  k.num_threads = opt.num_threads > 0 ? opt.num_threads : default_threads(local_size_);
  k.device_id = opt.device_id;
  k.kokkos_args = opt.kokkos_args;
  if (k.device_id < 0) {
    int const ngpu = visible_gpus();
    if (ngpu > 0) k.device_id = local_rank_ % ngpu;
  }
  if (!Kokkos::is_initialized()) compat::initialize(k);
}

Environment::~Environment() {
  if (Kokkos::is_initialized()) Kokkos::finalize();
#ifdef KSPECTER_HAVE_MPI
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (we_initialized_mpi_ && !finalized) MPI_Finalize();
#endif
}

bool Environment::mpi_enabled() const {
#ifdef KSPECTER_HAVE_MPI
  int initialized = 0;
  MPI_Initialized(&initialized);
  return initialized != 0;
#else
  return false;
#endif
}

void Environment::abort(int code) {
#ifdef KSPECTER_HAVE_MPI
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (initialized && !finalized) MPI_Abort(MPI_COMM_WORLD, code);
#endif
  std::exit(code);
}

}  // namespace kspecter::parallel
