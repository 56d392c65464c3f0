"""Builds the extension kspecter._kspecter (and the kspecter executable that
`python -m kspecter` runs) with CMake, for `pip install --no-build-isolation .`.

Environment: CMAKE_PREFIX_PATH (where Kokkos is; default: cmake/bootstrap-deps.sh's cached
build, made if missing), CMAKE_ARGS (more CMake options, e.g.
-DCMAKE_CXX_COMPILER=<kokkos>/bin/nvcc_wrapper for CUDA), CMAKE_BUILD_PARALLEL_LEVEL.
"""

import os
import re
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))


def version():
    with open(os.path.join(ROOT, "CMakeLists.txt")) as f:
        return re.search(r"project\(kspecter VERSION ([0-9.]+)", f.read()).group(1)


def kokkos_prefix():
    if os.environ.get("CMAKE_PREFIX_PATH"):
        return None  # CMake reads it itself
    out = subprocess.run(["bash", os.path.join(ROOT, "cmake", "bootstrap-deps.sh"), "--no-apt"],
                         check=True, capture_output=True, text=True).stdout
    for line in out.splitlines():
        if line.startswith("KOKKOS_PREFIX="):
            return line.split("=", 1)[1]
    raise RuntimeError("cmake/bootstrap-deps.sh gave no Kokkos prefix; set CMAKE_PREFIX_PATH")


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        package_dir = os.path.dirname(os.path.abspath(self.get_ext_fullpath(ext.name)))
        build = os.path.abspath(os.path.join(self.build_temp, "cmake"))
        args = ["-S", ROOT, "-B", build, "-DCMAKE_BUILD_TYPE=Release",
                "-DKSPECTER_ENABLE_PYTHON=ON", "-DKSPECTER_ENABLE_TESTS=OFF",
                "-DKSPECTER_ENABLE_BENCHMARKS=OFF", f"-DPython3_EXECUTABLE={sys.executable}",
                f"-DKSPECTER_PYTHON_PACKAGE_DIR={package_dir}"]
        if subprocess.run(["ninja", "--version"], capture_output=True).returncode == 0:
            args += ["-G", "Ninja"]
        prefix = kokkos_prefix()
        if prefix:
            args.append(f"-DCMAKE_PREFIX_PATH={prefix}")
        args += os.environ.get("CMAKE_ARGS", "").split()
        subprocess.run(["cmake", *args], check=True)
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL", str(os.cpu_count() or 1))
        subprocess.run(["cmake", "--build", build, "--target", "_kspecter", "-j", jobs],
                       check=True)


setup(
    version=version(),
    ext_modules=[Extension("kspecter._kspecter", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    options={"build": {"build_base": "build-python"}},
    zip_safe=False,
)
