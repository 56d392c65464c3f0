#include <kspecter/core/error.hpp>
#include <kspecter/core/gpu_probe.hpp>
#include <kspecter/core/kokkos_compat.hpp>
#include <kspecter/core/log.hpp>
#include <kspecter/parallel/environment.hpp>

#ifdef KSPECTER_HAVE_MPI
#include <mpi.h>
#endif
#if defined(KOKKOS_ENABLE_CUDA)
#include <cuda_runtime.h>
#elif defined(KOKKOS_ENABLE_HIP)
#include <hip/hip_runtime.h>
#endif

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>
#ifdef __linux__
#include <sched.h>
#endif

namespace kspecter::parallel {

namespace {
// GPUs visible to this process, counted before Kokkos is up (so that the device can be chosen),
// by the probe that knows both vendors' drivers.
int visible_gpus() {
  GpuProbe const& p = gpu_probe();
  return p.usable ? p.devices : 0;
}
// `text` as a whole decimal integer, or nullopt.
bool parse_int(std::string const& text, int& out) {
  auto const [end, err] = std::from_chars(text.data(), text.data() + text.size(), out);
  return !text.empty() && err == std::errc() && end == text.data() + text.size();
}

// Host threads for a rank that was given none: the cores it may run on (no oversubscription),
// or OMP_NUM_THREADS; at most max_host_threads either way, with a warning when cut.
int default_threads(int local_size) {
  if (char const* env = std::getenv("OMP_NUM_THREADS")) {
    std::string text = env;
    text = text.substr(0, text.find(','));  // "8,2": the outer level's
    int n = 0;
    if (!parse_int(text, n) || n <= max_host_threads) return -1;  // OpenMP obeys (or ignores) it
    warn("OMP_NUM_THREADS=" + std::string(env) + ": kspecter uses " +
         std::to_string(max_host_threads) + " host threads, the most Kokkos' OpenMP pool takes");
    return max_host_threads;
  }
  int const n = cpus_per_rank(local_size);
  if (n <= max_host_threads) return n;
  warn("this rank may use " + std::to_string(n) + " CPUs: kspecter uses " +
       std::to_string(max_host_threads) + " host threads, the most Kokkos' OpenMP pool takes " +
       "(--threads chooses fewer)");
  return max_host_threads;
}

// The --kokkos-* flags with a number, checked before Kokkos parses them (Kokkos 3.4 calls
// std::stoi, whose exception names nothing, and starts any thread count it is given).
void check_kokkos_args(std::vector<std::string> const& args) {
  for (auto const& a : args) {
    std::string const name = a.substr(0, a.find('='));
    bool const threads = name == "--kokkos-threads" || name == "--kokkos-num-threads";
    bool const device = name == "--kokkos-device-id" || name == "--kokkos-device" ||
                        name == "--kokkos-numa";  // (--kokkos-num-devices takes "N,M")
    if (!threads && !device) continue;
    std::string const value = a.size() > name.size() ? a.substr(name.size() + 1) : "";
    int n = 0;
    if (!parse_int(value, n))
      throw ParameterError(name + " must be a whole number, got '" + value + "'");
    if (threads && (n < 1 || n > max_host_threads))
      throw ParameterError(name + " must be in 1.." + std::to_string(max_host_threads) +
                           " (Kokkos' OpenMP pool fails beyond), got " + value);
    if (device && n < 0) throw ParameterError(name + " must be 0 or more, got " + value);
  }
}
// The rank that mpiexec, mpirun (Open MPI, MPICH, Intel MPI, PMIx launchers) or srun put in
// the environment of every process they start; nullptr when none did.
char const* launcher_rank_text() {
  for (char const* var : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID"})
    if (char const* v = std::getenv(var)) return v;
  return nullptr;
}
// The node-local rank (or, with `size`, the ranks on the node) that the launcher put in the
// environment: Open MPI, MPICH/Hydra and Intel MPI, Cray PALS, Slurm (rank only); 0 (1) when
// none did.
[[maybe_unused]] int launcher_local(bool size) {
  auto const names = size
                         ? std::vector<char const*>{"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS",
                                                    "PALS_LOCAL_SIZE"}
                         : std::vector<char const*>{"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID",
                                                    "PALS_LOCAL_RANKID", "SLURM_LOCALID"};
  for (char const* var : names) {
    int n = 0;
    if (char const* v = std::getenv(var); v && parse_int(v, n) && n >= 0)
      return size ? std::max(n, 1) : n;
  }
  return size ? 1 : 0;
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
  // which takes Open MPI most of a second: perf/gpu_runs.md) would buy nothing.
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
  if (initialized && !opt.mpi) {
    // MPI belongs to the caller (mpi4py), and not every rank of its world need reach kspecter
    // (desi_proc's reader and writer ranks never do): no collective on that world. The
    // launcher says where this rank sits on its node.
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    local_rank_ = launcher_local(false);
    local_size_ = launcher_local(true);
  } else if (initialized) {
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
  check_kokkos_args(opt.kokkos_args);
  if (opt.num_threads > max_host_threads)
    throw ParameterError("host threads must be in 1.." + std::to_string(max_host_threads) +
                         " (Kokkos' OpenMP pool fails beyond), got " +
                         std::to_string(opt.num_threads));
  if (opt.device_id < -1)  // -1: the default (node-local rank modulo the GPUs)
    throw ParameterError("the GPU ordinal (--device) must be 0 or more, got " +
                         std::to_string(opt.device_id));
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

void Environment::release_device() {
  if (mpi_enabled()) return;
  if (Kokkos::is_initialized()) Kokkos::finalize();
    // Errors here change nothing: the process ends the context anyway.
#if defined(KOKKOS_ENABLE_CUDA)
  (void)cudaDeviceReset();
#elif defined(KOKKOS_ENABLE_HIP)
  (void)hipDeviceReset();
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
