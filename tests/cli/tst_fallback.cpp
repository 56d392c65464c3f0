// The CPU fallback of a GPU build (src/cli/gpu_fallback.hpp), run with every GPU hidden, so
// that it tests the same thing on a GPU node as on a machine without one: `--backend auto`
// (or a host backend) hands the command to the CPU twin with one line and gives the twin's own
// frame bit for bit, also under mpiexec; a GPU backend named, or no twin, is a clear error;
// `info` reports the build without starting the GPU backend. Starts no Kokkos itself.
#include <run_command.hpp>

#include <gtest/gtest.h>

#include <unistd.h>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace {

using Result = kspecter::test::CommandResult;

std::string const gpu_exe = KSPECTER_CLI_PATH;
std::string const twin = KSPECTER_HOST_TWIN_PATH;
std::string const gpu_backend = KSPECTER_GPU_BACKEND;  // "cuda" or "hip"
// No device for either GPU runtime, whatever the node has.
std::string const no_gpu =
    "CUDA_VISIBLE_DEVICES=-1 HIP_VISIBLE_DEVICES=-1 ROCR_VISIBLE_DEVICES=-1 ";
std::string const grid = "-w 6000,6120,0.8";
std::string const layout = "-n 20 --bundlesize 10 --nsubbundles 2";

Result run(std::string const& cmd) { return kspecter::test::run_command(cmd); }

// A FITS file's bytes, its CHECKSUM and DATASUM cards blanked: cfitsio dates their comments
// ("HDU checksum updated <time>"), so they differ between any two runs; the data stay.
std::string bytes_of(std::string const& path) {
  std::ifstream in(path, std::ios::binary);
  std::string b{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  for (std::size_t card = 0; card + 80 <= b.size(); card += 80)
    if (b.compare(card, 9, "CHECKSUM=") == 0 || b.compare(card, 9, "DATASUM =") == 0)
      b.replace(card, 80, 80, ' ');
  return b;
}

int count_of(std::string const& text, std::string const& what) {
  int n = 0;
  for (auto p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

// Words of Kokkos' own start-up failure, which the fallback exists to avoid.
void expect_no_kokkos_abort(Result const& r) {
  EXPECT_EQ(r.out.find("Kokkos::"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("cudaGetDeviceCount"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("Aborted"), std::string::npos) << r.out;
}

class Fallback : public ::testing::Test {
 protected:
  // Input and the reference frame come from the twin run directly, on OpenMP.
  static void SetUpTestSuite() {
    dir_ = std::filesystem::path(KSPECTER_TEST_BINARY_DIR) / "scratch" /
           ("fallback." + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    auto r = run(twin + " make-psf -o " + path("psf.fits"));
    ASSERT_EQ(r.status, 0) << r.out;
    r = run(twin + " simulate --psf " + path("psf.fits") + " -o " + path("preproc.fits") +
            " -n 20 --seed 11 " + grid);
    ASSERT_EQ(r.status, 0) << r.out;
    r = run(extract(twin, "reference.fits") + " --backend openmp");
    ASSERT_EQ(r.status, 0) << r.out;
  }
  static void TearDownTestSuite() { std::filesystem::remove_all(dir_); }
  static std::string path(std::string const& name) { return (dir_ / name).string(); }
  static std::string extract(std::string const& exe, std::string const& output) {
    return exe + " extract -i " + path("preproc.fits") + " -p " + path("psf.fits") + " -o " +
           path(output) + " " + grid + " " + layout;
  }
  static std::filesystem::path dir_;
};
std::filesystem::path Fallback::dir_;

TEST_F(Fallback, host_backends_run_on_the_twin_bit_for_bit) {
  std::string const reference = bytes_of(path("reference.fits"));
  ASSERT_FALSE(reference.empty());
  for (std::string backend : {"auto", "openmp"}) {
    std::string const out = backend + ".fits";
    auto const r = run(no_gpu + extract(gpu_exe, out) + " --backend " + backend);
    ASSERT_EQ(r.status, 0) << r.out;
    EXPECT_EQ(count_of(r.out, "no usable GPU: "), 1) << r.out;
    EXPECT_EQ(count_of(r.out, "running on the CPU with " + twin + "\n"), 1) << r.out;
    EXPECT_NE(r.out.find("(OpenMP)"), std::string::npos) << r.out;
    expect_no_kokkos_abort(r);
    EXPECT_TRUE(bytes_of(path(out)) == reference) << backend << ": the frame differs";
  }
}

#ifdef KSPECTER_MPIEXEC  // built with MPI
TEST_F(Fallback, mpi_ranks_fall_back_alike) {
  auto const r = run(no_gpu + KSPECTER_MPIEXEC + " -n 2 --oversubscribe -x OMP_NUM_THREADS=1 " +
                     "-x CUDA_VISIBLE_DEVICES -x HIP_VISIBLE_DEVICES -x ROCR_VISIBLE_DEVICES " +
                     extract(gpu_exe, "np2.fits"));
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(count_of(r.out, "no usable GPU: "), 1) << r.out;  // launcher rank 0 says it
  EXPECT_NE(r.out.find("on 2 ranks"), std::string::npos) << r.out;
  EXPECT_TRUE(bytes_of(path("np2.fits")) == bytes_of(path("reference.fits")));
}
#endif

TEST_F(Fallback, gpu_backend_named_is_a_clear_error) {
  auto const r = run(no_gpu + extract(gpu_exe, "gpu.fits") + " --backend " + gpu_backend);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("error: --backend " + gpu_backend + ": no usable GPU: "), std::string::npos)
      << r.out;
  EXPECT_EQ(count_of(r.out, "\n"), 1) << r.out;
  expect_no_kokkos_abort(r);
  EXPECT_FALSE(std::filesystem::exists(path("gpu.fits")));
}

TEST_F(Fallback, without_a_twin_a_clear_error) {
  auto const r = run(no_gpu + "KSPECTER_CPU_FALLBACK=none " + extract(gpu_exe, "none.fits"));
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find("no usable GPU: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("has no CPU fallback"), std::string::npos) << r.out;
  expect_no_kokkos_abort(r);
  EXPECT_FALSE(std::filesystem::exists(path("none.fits")));
}

TEST_F(Fallback, a_gpu_build_as_fallback_does_not_hand_over_again) {
  auto const r =
      run(no_gpu + "KSPECTER_CPU_FALLBACK=" + gpu_exe + " " + extract(gpu_exe, "loop.fits"));
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_EQ(count_of(r.out, "running on the CPU with " + gpu_exe), 1) << r.out;
  EXPECT_NE(r.out.find("was itself started as the CPU fallback of " + gpu_exe), std::string::npos)
      << r.out;
}

TEST_F(Fallback, info_reports_the_build_without_starting_the_gpu) {
  auto r = run(no_gpu + gpu_exe + " info");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find(gpu_backend == "cuda" ? "Cuda" : "HIP"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("no usable GPU: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("; CPU fallback: " + twin + "\n"), std::string::npos) << r.out;
  expect_no_kokkos_abort(r);
  r = run(no_gpu + "KSPECTER_CPU_FALLBACK=none " + gpu_exe + " info");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("; CPU fallback: none\n"), std::string::npos) << r.out;
  // The twin itself is a host build.
  r = run(twin + " info");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("none (host-only build)"), std::string::npos) << r.out;
}

}  // namespace
