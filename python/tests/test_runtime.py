"""Kokkos once per process, settings from arguments or the environment, and
`python -m kspecter`."""

import os
import subprocess
import sys

import pytest

import kspecter
from conftest import GRID, cli_path


def python(code, **env):
    full = dict(os.environ, OMP_PROC_BIND="false", **env)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=full)


def test_python_m_kspecter_runs_the_cli():
    env = dict(os.environ, KSPECTER_CLI=cli_path())
    r = subprocess.run([sys.executable, "-m", "kspecter", "--version"], capture_output=True,
                       text=True, env=env)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "kspecter " + kspecter.__version__
    r = subprocess.run([sys.executable, "-m", "kspecter", "extract", "--nosuch"],
                       capture_output=True, text=True, env=env)
    assert r.returncode == 2
    assert "nosuch" in r.stderr


def test_initialize_once_with_settings_from_arguments_or_environment(inputs):
    run = ("import kspecter, sys\n"
           "img = kspecter.read_image(sys.argv[1])\n"
           "assert not kspecter.is_initialized()\n"
           "{init}\n"
           "kspecter.extract_frame(img, sys.argv[2], 10, 0, 10, '" + GRID + "', nsubbundles=2)\n"
           "assert kspecter.is_initialized()\n"
           "print(kspecter.default_backend())\n"
           "try:\n"
           "    kspecter.initialize(backend='serial')\n"
           "except kspecter.Error as e:\n"
           "    print('again:', e)\n")
    code = "import sys; sys.argv[1:] = [%r, %r]\n" % (inputs.image, inputs.psf)
    r = python(code + run.format(init="kspecter.initialize(backend='serial', threads=1)"))
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "serial"
    assert lines[1].startswith("again: kspecter is already initialized")
    r = python(code + run.format(init=""), KSPECTER_BACKEND="serial", KSPECTER_THREADS="1")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[0] == "serial"
    r = python(code + run.format(init=""), KSPECTER_BACKEND="nosuch")
    assert r.returncode != 0
    assert "backend 'nosuch' is not enabled" in r.stderr
    r = python(code + run.format(init="kspecter.initialize(threads=0)"))
    assert r.returncode != 0
    assert "threads must be in 1..512" in r.stderr


def test_kokkos_is_finalized_at_exit():
    """kspecter's atexit handler ends Kokkos before handlers registered before it run."""
    r = python("import atexit\n"
               "def last():\n"
               "    import kspecter\n"
               "    print('at exit:', kspecter.is_initialized())\n"
               "atexit.register(last)\n"
               "import kspecter\n"
               "kspecter.initialize()\n"
               "print('running:', kspecter.is_initialized())\n")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["running: True", "at exit: False"]
    r = python("import kspecter; kspecter.initialize(); kspecter.finalize()\n"
               "try:\n    kspecter.initialize()\nexcept kspecter.Error as e:\n    print(e)")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "kspecter was finalized: Kokkos cannot start twice in a process"
