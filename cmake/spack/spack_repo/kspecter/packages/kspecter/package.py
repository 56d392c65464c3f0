# Copyright the kspecter developers. See the LICENSE file for details.
#
# SPDX-License-Identifier: BSD-3-Clause
#
# Spack recipe for kspecter, in the form of the builtin packages of spack-packages (package
# API v2). From this repository:
#   spack repo add <kspecter>/cmake/spack/spack_repo/kspecter
#   spack install kspecter +cuda cuda_arch=90      (or ~cuda +openmp, +rocm amdgpu_target=gfx90a)
#   spack test run kspecter
# or through an environment that builds the checkout itself: <kspecter>/spack/hopper/spack.yaml
# (H100/H200, cuda_arch=90) or <kspecter>/spack/perlmutter/spack.yaml (A100, cuda_arch=80).

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
    # Off by default: no DESI tool reads HDF5 frames; FITS (.fits, .fits.gz) is always built.
    variant("hdf5", default=False, description="Write frames as HDF5 as well as FITS")
    variant("python", default=False, description="Build the Python module (pybind11)")
    variant("tests", default=False, description="Build the GoogleTest suite and the benchmarks")

    depends_on("c", type="build")
    depends_on("cxx", type="build")
    depends_on("cmake@3.18:", type="build")
    # cmake/Find{CFITSIO,ERFA,ISAL}.cmake ask pkg-config first, then search the prefixes.
    depends_on("pkgconfig", type="build")

    # ---------------------------------------------------------------- Kokkos
    # The Kokkos versions kspecter has been built and tested against: 3.4.01 (Debian's
    # Trilinos 13.2, OpenMP and CUDA) and 4.6.01 (OpenMP and Serial, as C++17 and as C++20;
    # CUDA on an H100 and an H200, with CUDA 13 and kspecter's patch for it, perf/gpu_runs.md);
    # the develop snapshot 4.6.99 likewise for CUDA (outside Spack: its `develop` version is
    # not in this range); everything between them differs only behind core/kokkos_compat.hpp. 3.7.02 is the oldest
    # Kokkos in spack-packages (and the first that knows Hopper without kspecter's patch). Kokkos
    # 5.x needs C++20 and has not been built with kspecter: it is left out until it has.
    depends_on("kokkos@3.7:4.6")
    # kspecter compiles in the C++ standard its Kokkos was built with
    # (cmake/kspecter_cxx_standard.cmake) and needs at least C++17; Kokkos 3.x offers 14.
    conflicts("^kokkos cxxstd=14", msg="kspecter is C++17 and takes the C++ standard of Kokkos")

    # The backends are Kokkos': kspecter compiles its kernels for every backend its Kokkos
    # has, so each variant is passed on to Kokkos, both ways.
    for _backend in ("openmp", "serial", "cuda", "rocm"):
        depends_on(f"kokkos+{_backend}", when=f"+{_backend}")
        depends_on(f"kokkos~{_backend}", when=f"~{_backend}")
    conflicts("~openmp~serial", msg="kspecter needs a host backend (openmp or serial)")
    conflicts("+cuda", when="+rocm", msg="Kokkos builds one GPU backend at a time")

    # CUDA: the user's cuda_arch (CudaPackage), one value, passed on to Kokkos (whose cuda_arch
    # takes one value). Kokkos up to 4.7.0 refuses CUDA 13 in its recipe, so CUDA is 12.x here.
    conflicts("+cuda", when="cuda_arch=none", msg="CUDA builds need cuda_arch (80 A100, 90 H100)")
    for _arch in CudaPackage.cuda_arch_values:
        depends_on(f"kokkos+cuda cuda_arch={_arch}", when=f"+cuda cuda_arch={_arch}")
    # Device lambdas (KOKKOS_LAMBDA) are Kokkos' variant cuda_lambda, which exists only for
    # kokkos@:4 +cuda, default off (in 5.x lambdas are always on and the variant is gone).
    # ~cuda_lambda passes -DKokkos_ENABLE_CUDA_LAMBDA=OFF: Kokkos 3.x and 4.0.x then build
    # without device lambdas; 4.1 to 4.6 force them on with a deprecation message, or stop with
    # a fatal error where Kokkos_ENABLE_DEPRECATED_CODE_4 is off.
    requires("^kokkos+cuda_lambda", when="+cuda ^kokkos@:4")
    # Kokkos' recipe stops a +cuda build (InstallError in its cmake_args) unless it has
    # +wrapper (nvcc_wrapper), +cmake_lang or a clang/cce compiler; with GCC that is +wrapper.
    depends_on("kokkos+wrapper", when="+cuda %gcc")
    # kspecter's .cpp files are compiled by the C++ compiler (nvcc_wrapper or clang for CUDA,
    # hipcc for HIP), not as CMake's CUDA or HIP language.
    conflicts("^kokkos+cmake_lang", when="+cuda")
    conflicts("^kokkos+cmake_lang", when="+rocm")

    # HIP: the user's amdgpu_target (ROCmPackage), one value, passed on to Kokkos; kspecter
    # is then compiled with hipcc (docs/building-gpu.md).
    conflicts("+rocm", when="amdgpu_target=none", msg="HIP builds need amdgpu_target (gfx90a)")
    for _target in ROCmPackage.amdgpu_targets:
        depends_on(f"kokkos+rocm amdgpu_target={_target}", when=f"+rocm amdgpu_target={_target}")

    # ---------------------------------------------------------------- the rest
    # Everything CMakeLists.txt finds: CFITSIO, ERFA, zlib, ISA-L (igzip: gzip inflate and
    # parallel deflate; Debian's 2.30.0 is the one built and tested), HDF5, MPI.
    depends_on("cfitsio")
    depends_on("erfa")
    depends_on("zlib-api")
    depends_on("isa-l@2.30:")
    depends_on("mpi", when="+mpi")
    depends_on("hdf5+mpi", when="+hdf5+mpi")
    depends_on("hdf5~mpi", when="+hdf5~mpi")
    with when("+python"):
        extends("python")
        depends_on("python@3.8:", type=("build", "link", "run"))
        depends_on("py-pybind11@2.6:", type="build")
        depends_on("py-numpy", type=("build", "run"))
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
        if self.spec.satisfies("+python"):
            # Spack's Python, not the system's (python/CMakeLists.txt prefers /usr/bin/python3),
            # and its site-packages under this prefix, where extends("python") looks.
            args.append(self.define("Python3_EXECUTABLE", self.spec["python"].command.path))
            args.append(self.define("KSPECTER_PYTHON_INSTALL_DIR", python_platlib))
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

    def test_python(self):
        """import the installed Python package and list its backends"""
        if not self.spec.satisfies("+python"):
            raise SkipTest("built without +python")
        python = which(self.spec["python"].command.path, required=True)
        out = python(
            "-c",
            "import kspecter; print('kspecter', kspecter.__version__, kspecter.backends())",
            output=str.split,
            error=str.split,
        )
        expected = ["kspecter ", "auto"]
        if self.spec.satisfies("+openmp"):
            expected.append("openmp")
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
