# Copyright the kspecter developers. See the LICENSE file for details.
#
# SPDX-License-Identifier: BSD-3-Clause
#
# Spack recipe for kspecter, in the form of the builtin packages of spack-packages (package
# API v2). From this repository:
#   spack repo add <kspecter>/cmake/spack/spack_repo/kspecter
#   spack install kspecter +cuda cuda_arch=90      (or ~cuda +openmp, +rocm amdgpu_target=gfx90a)
#   spack test run kspecter
# or through <kspecter>/spack.yaml, which builds the checkout itself.

from spack_repo.builtin.build_systems.cmake import CMakePackage
from spack_repo.builtin.build_systems.cuda import CudaPackage
from spack_repo.builtin.build_systems.rocm import ROCmPackage

from spack.package import *


class Kspecter(CMakePackage, CudaPackage, ROCmPackage):
    """Spectroperfectionism extraction of fiber-spectrograph CCD frames (DESI-compatible
    frames) on Kokkos: GaussHermite PSF spots, batched weighted least-squares solves and
    resolution matrices, MPI over bundles of fibers and frames, one source for CPUs and GPUs."""

    homepage = "https://github.com/kspecter/kspecter"
    url = "https://github.com/kspecter/kspecter/archive/refs/tags/v0.1.0.tar.gz"
    git = "https://github.com/kspecter/kspecter.git"

    license("BSD-3-Clause")

    test_requires_compiler = True

    # Released versions get a sha256 line each (spack checksum kspecter <version>).
    version("main", branch="main")

    variant("openmp", default=True, description="OpenMP backend (through Kokkos)")
    variant("serial", default=True, description="Serial backend (through Kokkos)")
    variant("mpi", default=True, description="Distribute bundles and frames over MPI ranks")
    variant("hdf5", default=True, description="Write frames as HDF5 as well as FITS")
    variant("python", default=False, description="Build the Python module (pybind11)")
    variant("tests", default=False, description="Build the GoogleTest suite and the benchmarks")

    depends_on("c", type="build")
    depends_on("cxx", type="build")
    depends_on("cmake@3.18:", type="build")

    # kspecter keeps to the Kokkos API shared by 3.4 to 4.x and develop (behind
    # core/kokkos_compat.hpp) and compiles in the C++ standard of its Kokkos (C++20 for 5.x).
    # Tested with Kokkos 3.4.01 (Debian), 4.6.01 and 4.6.99 (develop, C++20); the oldest in
    # spack-packages is 4.4.00, and +cuda_lambda below matters only for older site Kokkos.
    depends_on("kokkos@3.7:")

    # The backends are Kokkos': kspecter compiles its kernels for every backend its Kokkos
    # has, so each variant is passed on to Kokkos, both ways.
    for _backend in ("openmp", "serial", "cuda", "rocm"):
        depends_on(f"kokkos+{_backend}", when=f"+{_backend}")
        depends_on(f"kokkos~{_backend}", when=f"~{_backend}")
    conflicts("~openmp~serial", msg="kspecter needs a host backend (openmp or serial)")
    conflicts("+cuda", when="+rocm", msg="Kokkos builds one GPU backend at a time")

    conflicts("+cuda", when="cuda_arch=none", msg="CUDA builds need cuda_arch (90 for H100)")
    for _arch in CudaPackage.cuda_arch_values:
        depends_on(f"kokkos+cuda cuda_arch={_arch}", when=f"+cuda cuda_arch={_arch}")
    # Device lambdas are an option of Kokkos 3 (always on from Kokkos 4).
    requires("^kokkos+cuda_lambda", when="+cuda ^kokkos@:3")
    # kspecter's .cpp files are compiled by the C++ compiler (nvcc_wrapper or clang), not as
    # CMake's CUDA language.
    conflicts("^kokkos+cmake_lang", when="+cuda")

    conflicts("+rocm", when="amdgpu_target=none", msg="HIP builds need amdgpu_target (gfx90a)")
    for _target in ROCmPackage.amdgpu_targets:
        depends_on(f"kokkos+rocm amdgpu_target={_target}", when=f"+rocm amdgpu_target={_target}")

    depends_on("cfitsio")
    depends_on("erfa")
    depends_on("mpi", when="+mpi")
    depends_on("hdf5+mpi", when="+hdf5+mpi")
    depends_on("hdf5~mpi", when="+hdf5~mpi")
    with when("+python"):
        extends("python")
        depends_on("python@3.8:", type=("build", "link", "run"))
        depends_on("py-pybind11@2.10:", type="build")
    depends_on("googletest", type=("build", "link"), when="+tests")

    def cmake_args(self):
        args = [
            self.define_from_variant("KSPECTER_ENABLE_MPI", "mpi"),
            self.define_from_variant("KSPECTER_ENABLE_HDF5", "hdf5"),
            self.define_from_variant("KSPECTER_ENABLE_PYTHON", "python"),
            self.define_from_variant("KSPECTER_ENABLE_TESTS", "tests"),
            self.define_from_variant("KSPECTER_ENABLE_BENCHMARKS", "tests"),
        ]
        args.append(self.define("CMAKE_CXX_COMPILER", self._cxx()))
        return args

    def _cxx(self):
        """hipcc for HIP, nvcc_wrapper for a Kokkos +cuda +wrapper, else the compiler Kokkos
        was built with; consumers of kspecter compile with the same."""
        if self.spec.satisfies("+rocm"):
            return self.spec["hip"].hipcc
        return self["kokkos"].kokkos_cxx

    # ---------------------------------------------------------------- smoke tests
    consumer_src = join_path("tests", "consumer", "project")

    @run_after("install")
    def cache_consumer_project(self):
        """Keep the consumer project's sources for `spack test run`."""
        cache_extra_test_sources(self, [self.consumer_src])

    def test_info(self):
        """run the installed `kspecter info`"""
        kspecter = which(self.prefix.bin.kspecter, required=True)
        out = kspecter("info", output=str.split, error=str.split)
        expected = ["kspecter ", "kokkos ", "backends "]
        if self.spec.satisfies("+openmp"):
            expected.append("OpenMP")
        check_outputs(expected, out)

    def test_consumer(self):
        """build and run a CMake project that links kspecter::kspecter"""
        src = join_path(self.test_suite.current_test_cache_dir, self.consumer_src)
        cmake = which(self.spec["cmake"].prefix.bin.cmake, required=True)
        cmake(
            "-S",
            src,
            "-B",
            "consumer-build",
            self.define("CMAKE_PREFIX_PATH", ";".join(get_cmake_prefix_path(self))),
            self.define("CMAKE_CXX_COMPILER", self._cxx()),
        )
        cmake("--build", "consumer-build")
        consumer = which(join_path("consumer-build", "consumer"), required=True)
        out = consumer(output=str.split, error=str.split)
        check_outputs(["consumer linked kspecter", "sum 4950"], out)
