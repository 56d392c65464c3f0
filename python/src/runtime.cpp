// Kokkos (and MPI, when the library is built with it) for the whole Python process: brought up
// once, by kspecter.initialize() or by the first call that needs it, through the same
// parallel::Environment as the CLI, and torn down at exit (kspecter/__init__.py registers
// finalize with atexit). MPI itself belongs to mpi4py: kspecter never starts or ends it.
// Extractions run on the thread that started Kokkos (any thread may start it; the GIL is
// released meanwhile, so other Python threads run).
#include "module.hpp"

#include <kspecter/core/error.hpp>
#include <kspecter/core/log.hpp>
#include <kspecter/extract/backend.hpp>
#include <kspecter/extract/extractor.hpp>
#include <kspecter/parallel/environment.hpp>

#include <pybind11/stl.h>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

namespace kspecter::python {

namespace {

constexpr int max_threads = 512;  // Kokkos 3.4's OpenMP thread pool (as the CLI's --threads)

struct Runtime {
  std::unique_ptr<parallel::Environment> env;
  std::string backend = "auto";
  bool finalized = false;
  // Kokkos' OpenMP backend (3.x) belongs to the thread that initialized it: its instance is
  // OpenMP-threadprivate, and another thread finds it uninitialized.
  std::thread::id owner;
  // Objects that hold Kokkos memory past a call (kspecter.Extractor): released before Kokkos
  // ends, so that none frees a View after it.
  std::vector<std::weak_ptr<extract::Extractor>> holders;
};

Runtime& runtime() {
  static Runtime* r = new Runtime;  // never destroyed: finalize() ends Kokkos, not a destructor
  return *r;
}

std::optional<std::string> env_string(char const* name) {
  char const* v = std::getenv(name);
  if (!v || !*v) return std::nullopt;
  return std::string(v);
}

std::optional<int> env_int(char const* name) {
  auto const s = env_string(name);
  if (!s) return std::nullopt;
  try {
    std::size_t used = 0;
    int const v = std::stoi(*s, &used);
    if (used == s->size()) return v;
  } catch (std::exception const&) {
  }
  throw ParameterError(std::string(name) + " must be an integer, got '" + *s + "'");
}

// The calling thread's current CUDA device: cupy's current device (cupy.cuda.Device(n).use()
// sets it), 0 unless the caller chose another. None without a CUDA device.
std::optional<int> current_device() {
#ifdef KOKKOS_ENABLE_CUDA
  int d = -1;
  if (cudaGetDevice(&d) == cudaSuccess && d >= 0) return d;
  cudaGetLastError();  // clear it: no device is no error here
#endif
  return std::nullopt;
}

// The GPU rule of the Python entry (README, "Which GPU"): what the caller names, else where the
// caller's arrays are, else the caller's current device; never one the caller did not choose.
void start(std::optional<std::string> backend, std::optional<int> device,
           std::optional<int> threads, int array_device) {
  Runtime& rt = runtime();
  if (rt.finalized) throw Error("kspecter was finalized: Kokkos cannot start twice in a process");
  if (rt.env) {
    if (backend || device || threads)
      throw Error("kspecter is already initialized (backend " + rt.backend +
                  "): initialize() with settings must come before the first extraction");
    return;
  }
  if (!backend) backend = env_string("KSPECTER_BACKEND");
  if (!device) device = env_int("KSPECTER_DEVICE");
  if (!device && array_device >= 0) device = array_device;
  if (!device) device = current_device();
  if (!threads) threads = env_int("KSPECTER_THREADS");
  std::string const chosen = backend.value_or("auto");
  extract::backend_space_name(chosen);  // a ParameterError for a backend the build lacks
  parallel::EnvironmentOptions opt;
  opt.mpi = false;  // mpi4py's business; a communicator passed in is used as it is
  if (threads) {
    if (*threads < 1 || *threads > max_threads)
      throw ParameterError("threads must be in 1.." + std::to_string(max_threads) + ", got " +
                           std::to_string(*threads));
    opt.num_threads = *threads;
  }
  if (device) opt.device_id = *device;
  static int argc = 0;
  static char** argv = nullptr;
  rt.env = std::make_unique<parallel::Environment>(argc, argv, opt);
  rt.backend = chosen;
  rt.owner = std::this_thread::get_id();
}

void initialize(std::optional<std::string> backend, std::optional<int> device,
                std::optional<int> threads) {
  start(std::move(backend), device, threads, -1);
}

void finalize() {
  Runtime& rt = runtime();
  if (!rt.env) return;
  for (auto const& h : rt.holders)
    if (auto const e = h.lock()) e->release();
  rt.holders.clear();
  rt.env.reset();
  rt.finalized = true;
}

}  // namespace

void ensure_initialized(int array_device) {
  Runtime& rt = runtime();
  if (!rt.env) start(std::nullopt, std::nullopt, std::nullopt, array_device);
  if (std::this_thread::get_id() != rt.owner)
    throw Error(
        "kspecter runs Kokkos on the thread that started it (kspecter.initialize() or the "
        "first extraction): call it from that thread");
}

void release_before_finalize(std::shared_ptr<extract::Extractor> const& e) {
  Runtime& rt = runtime();
  rt.holders.erase(std::remove_if(rt.holders.begin(), rt.holders.end(),
                                  [](auto const& h) { return h.expired(); }),
                   rt.holders.end());
  rt.holders.push_back(e);
}

std::string backend_for(py::handle gpu) {
  if (gpu.is_none()) return runtime().backend;
  int const truth = PyObject_IsTrue(gpu.ptr());
  if (truth < 0) throw py::error_already_set();
  if (truth == 0) return extract::host_backend();
  std::string const name = extract::gpu_backend();
  if (name.empty())
    throw ParameterError("gpu=True but this kspecter build has no GPU backend (it has " +
                         extract::backend_names() + ")");
  return name;
}

namespace {

// The logging bridge: every line of kspecter's loggers and every kspecter::warn() goes to a
// Python function (kspecter._log_record, which hands it to the `logging` module), with the
// GIL taken on whichever thread wrote it. Unset at exit (kspecter/__init__.py) before the
// interpreter goes.
py::object* log_function = nullptr;  // never freed: it may outlive the interpreter's end

void python_log_sink(LogLevel level, std::string const& message, SourceLocation const& where) {
  if (!Py_IsInitialized() || !log_function) return;
  py::gil_scoped_acquire gil;
  try {
    // A message may hold any bytes (a file name): undecodable ones become U+FFFD.
    py::object const text = py::reinterpret_steal<py::object>(
        PyUnicode_DecodeUTF8(message.data(), static_cast<Py_ssize_t>(message.size()), "replace"));
    (*log_function)(static_cast<int>(level), text, where.file, where.line, where.function);
  } catch (py::error_already_set& e) {
    e.discard_as_unraisable("kspecter's log handler");
  }
}

void set_log_function(py::object f) {
  if (f.is_none()) {
    set_log_sink(nullptr);
    return;  // the old function is kept alive: a line may still be on its way to it
  }
  if (!log_function) log_function = new py::object();
  *log_function = std::move(f);
  set_log_level(LogLevel::debug);  // warn(): Python's logging levels decide
  set_log_sink(&python_log_sink);
}

}  // namespace

void bind_runtime(py::module_& m) {
  m.def("_set_log_function", &set_log_function, py::arg("function"),
        "Sends kspecter's log lines and warnings to function(levelno, message, file, line, "
        "function); None: back to stderr.");
  m.def(
      "_log",
      [](int level, std::string const& message) {
        Logger const log(LogLevel::debug);
        if (level >= 40)
          log_line(level >= 50 ? LogLevel::critical : LogLevel::error, message,
                   SourceLocation::current());
        else if (level >= 30)
          warn(message);
        else if (level >= 20)
          log.info(message);
        else
          log.debug(message);
      },
      py::arg("level"), py::arg("message"),
      "For tests: a WARNING (30) through kspecter::warn(), an ERROR (40) or CRITICAL (50) "
      "line, an INFO (20) or DEBUG (10) line from a Logger.");
  m.def("initialize", &initialize, py::arg("backend") = py::none(), py::arg("device") = py::none(),
        py::arg("threads") = py::none(),
        "Starts Kokkos for this process (once; the first extraction does it otherwise).\n\n"
        "backend: 'auto' (the build's default space), 'serial', 'openmp' or 'cuda', the one "
        "used when extract_frame's gpu is None; default $KSPECTER_BACKEND, else 'auto'.\n"
        "device: GPU ordinal; default $KSPECTER_DEVICE, else the calling thread's current "
        "CUDA device (cupy's current device). Without initialize(), the first extraction "
        "takes $KSPECTER_DEVICE, else the GPU of its cupy arrays, else the current device.\n"
        "threads: host threads; default $KSPECTER_THREADS, else $OMP_NUM_THREADS, else the "
        "cores this process may use.");
  m.def("finalize", &finalize,
        "Ends Kokkos (registered with atexit; no extraction is possible afterwards).");
  m.def("is_initialized", [] { return runtime().env != nullptr; });
  m.def(
      "backends", [] { return extract::backend_names(); },
      "The backends this build can run: 'auto' and the enabled ones.");
  m.def("default_backend", [] { return runtime().backend; });
}

}  // namespace kspecter::python
