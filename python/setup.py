"""pip install ./python: builds gtrace._core with CMake (the same python/CMakeLists.txt as the source tree's build,
no second list of sources) in build/pip/ of the repository, then packages it with gtrace/*.py.

No pyproject.toml on purpose: without one, pip builds with the setuptools already installed (Debian's
python3-setuptools) instead of fetching one from PyPI into an isolated environment, so the install works offline.
Needs what scripts/setup.sh installs (cmake, a C++20 compiler, python3-dev, python3-pybind11, libzstd-dev, ...).
"""
import glob
import os
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        if not os.path.exists(os.path.join(ROOT, "CMakeLists.txt")):
            sys.exit(f"gtrace: {ROOT} is not the gtrace repository (install from a clone: pip install ./python)")
        build = os.path.join(ROOT, "build", "pip")
        cfg = ["cmake", "-S", ROOT, "-B", build, "-DCMAKE_BUILD_TYPE=RelWithDebInfo",
               f"-DPython3_EXECUTABLE={sys.executable}", "-DGT_BUILD_PYTHON=ON", "-DGT_BUILD_TESTS=OFF",
               "-DGT_BUILD_COLLECTOR=OFF", "-DGT_BUILD_KERNELS=OFF", "-DGT_BUILD_UI=OFF", "-DGT_BUILD_BENCH=OFF"]
        if not os.path.exists(os.path.join(build, "CMakeCache.txt")) and shutil.which("ninja"):
            cfg += ["-G", "Ninja"]
        if shutil.which("ccache"):
            cfg += ["-DCMAKE_CXX_COMPILER_LAUNCHER=ccache", "-DCMAKE_C_COMPILER_LAUNCHER=ccache"]
        subprocess.check_call(cfg)
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL") or str(os.cpu_count() or 2)
        subprocess.check_call(["cmake", "--build", build, "--target", "gtrace_py_core", "-j", jobs])
        built = glob.glob(os.path.join(build, "python", "gtrace", "_core*.so"))
        if len(built) != 1:
            sys.exit(f"gtrace: expected one _core*.so in {build}/python/gtrace, found {built}")
        dest = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        shutil.copyfile(built[0], dest)


setup(
    name="gtrace",
    version="0.1.0",
    description="Read gtrace, Chrome and Kineto traces as pandas DataFrames (gtrace's viewer core)",
    packages=["gtrace"],
    ext_modules=[Extension("gtrace._core", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    install_requires=["numpy", "pandas"],
    python_requires=">=3.9",
    zip_safe=False,
)
