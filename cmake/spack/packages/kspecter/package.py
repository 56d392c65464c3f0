# Spack recipe for kspecter. Use it from this repository:
#   spack repo add <kspecter>/cmake/spack
#   spack install kspecter +cuda cuda_arch=90      (or +openmp, +rocm amdgpu_target=gfx90a)
# or through the environment in <kspecter>/spack.yaml, which builds the checkout itself.

from spack.package import *


class Kspecter(CMakePackage, CudaPackage, ROCmPackage):
    """Spectroperfectionism extraction of fiber spectrographs (DESI-compatible) on Kokkos:
    GaussHermite spots, batched projection and solves, MPI over bundles and frames."""

    homepage = "https://desi.lbl.gov"
    git = "https://github.com/kspecter/kspecter.git"
    maintainers("kspecter")
    license("BSD-3-Clause")

    version("main", branch="main")

    variant("openmp", default=True, description="Host OpenMP backend of Kokkos")
    variant("mpi", default=True, description="Distribute bundles and frames over MPI ranks")
    variant("hdf5", default=True, description="Write frames as HDF5 too")
    variant("tests", default=False, description="Build the GoogleTest suite and benchmarks")

    depends_on("cxx", type="build")
    depends_on("c", type="build")
    depends_on("cmake@3.18:", type="build")

    # kspecter uses only the API shared by Kokkos 3.4 and 4.x/5.x; Spack's oldest is 3.7.
    depends_on("kokkos@3.7:")
    depends_on("kokkos-kernels@3.7:")
    depends_on("kokkos+openmp", when="+openmp")
    depends_on("kokkos~openmp", when="~openmp")
    depends_on("kokkos-kernels+openmp", when="+openmp")

    # The backend propagates to Kokkos, as ArborX and Cabana do it.
    depends_on("kokkos+cuda+cuda_lambda+wrapper", when="+cuda")
    for _arch in CudaPackage.cuda_arch_values:
        _dep = "+cuda cuda_arch={0}".format(_arch)
        depends_on("kokkos {0}".format(_dep), when=_dep)
        depends_on("kokkos-kernels {0}".format(_dep), when=_dep)
    for _arch in ROCmPackage.amdgpu_targets:
        _dep = "+rocm amdgpu_target={0}".format(_arch)
        depends_on("kokkos {0}".format(_dep), when=_dep)
        depends_on("kokkos-kernels {0}".format(_dep), when=_dep)
    conflicts("+cuda", when="+rocm", msg="kspecter builds one GPU backend at a time")

    depends_on("cfitsio")
    depends_on("mpi", when="+mpi")
    depends_on("hdf5+mpi", when="+hdf5+mpi")
    depends_on("hdf5~mpi", when="+hdf5~mpi")
    depends_on("googletest", type=("build", "link"), when="+tests")
    depends_on("benchmark", type=("build", "link"), when="+tests")

    def cmake_args(self):
        spec = self.spec
        args = [
            self.define("CMAKE_CXX_COMPILER", spec["kokkos"].kokkos_cxx),
            self.define_from_variant("KSPECTER_ENABLE_MPI", "mpi"),
            self.define_from_variant("KSPECTER_ENABLE_HDF5", "hdf5"),
            self.define_from_variant("KSPECTER_ENABLE_TESTS", "tests"),
            self.define_from_variant("KSPECTER_ENABLE_BENCHMARKS", "tests"),
        ]
        if spec.satisfies("+rocm"):
            args.append(self.define("CMAKE_CXX_COMPILER", spec["hip"].hipcc))
        return args
