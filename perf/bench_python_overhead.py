#!/usr/bin/env python3
"""What a Python call adds: kspecter.extract_frame beside the C++ extract_frame of the same
frame (perf/bench_frame_call), both from float64 arrays in memory, same backend and threads.

The two run in turn, one call at a time (after one warm-up call each), so that a machine's load
weighs on both alike. Prints each round, the median and fastest of --repeat calls and the Python
call's overhead over C++. Run with the build's package on PYTHONPATH:

    PYTHONPATH=build/python OMP_PROC_BIND=false python3 perf/bench_python_overhead.py \\
        --bench build/perf/bench_frame_call --image img.fits --psf psf.fits -w 6000,6400,0.8

The target (issue 12): the Python call costs at most 5 % more than the C++ extraction.
"""

import argparse
import os
import re
import subprocess
import time


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--bench", required=True, help="the bench_frame_call executable")
    p.add_argument("--image", required=True)
    p.add_argument("--psf", required=True)
    p.add_argument("-w", "--wavelength", required=True, help="WMIN,WMAX,DW")
    p.add_argument("-s", "--specmin", type=int, default=0)
    p.add_argument("-n", "--nspec", type=int, default=25)
    p.add_argument("--bundlesize", type=int, default=25)
    p.add_argument("--nsubbundles", type=int, default=5)
    p.add_argument("--backend", default="auto")
    p.add_argument("--threads", type=int, default=None)
    p.add_argument("--repeat", type=int, default=5)
    args = p.parse_args()

    cmd = [args.bench, "--image", args.image, "--psf", args.psf, "-w", args.wavelength,
           "-s", str(args.specmin), "-n", str(args.nspec), "--bundlesize", str(args.bundlesize),
           "--nsubbundles", str(args.nsubbundles), "--backend", args.backend,
           "--repeat", str(args.repeat), "--interleave", "1"]
    if args.threads:
        cmd += ["--threads", str(args.threads)]

    import kspecter

    kspecter.initialize(backend=args.backend, threads=args.threads)
    img = kspecter.read_image(args.image)
    psf = kspecter.read_psf(args.psf)
    call = dict(bundlesize=args.bundlesize, specmin=args.specmin, nspec=args.nspec,
                wavelength=args.wavelength, nsubbundles=args.nsubbundles)

    def python_call():
        t0 = time.perf_counter()
        kspecter.extract_frame(img, psf, **call)
        return time.perf_counter() - t0

    # The C++ process reads its inputs and warms up, as does this one; then the calls alternate
    # (C++ first in even rounds, Python first in odd ones), one at a time.
    bench = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    print(bench.stdout.readline(), end="")  # "frame: ..." after its warm-up call
    python_call()

    def cpp_call():
        bench.stdin.write("\n")
        bench.stdin.flush()
        line = bench.stdout.readline()
        if not line.startswith("call "):
            raise RuntimeError(f"bench_frame_call said {line!r}")
        return float(line.split()[1])

    cpp, py = [], []
    for r in range(args.repeat):
        if r % 2 == 0:
            cpp.append(cpp_call())
            py.append(python_call())
        else:
            py.append(python_call())
            cpp.append(cpp_call())
        print(f"round {r + 1}: C++ {cpp[-1]:.4f} s, Python {py[-1]:.4f} s")
    bench.stdin.close()
    print(bench.stdout.read(), end="")  # its own summary
    if bench.wait() != 0:
        raise RuntimeError("bench_frame_call failed")

    def median(v):
        return sorted(v)[len(v) // 2]

    ratios = [p / c for p, c in zip(py, cpp)]
    print(f"Python kspecter.extract_frame: median {median(py):.4f} s, fastest {min(py):.4f} s "
          f"over {args.repeat} calls")
    print(f"overhead of the Python call: median {100 * (median(py) / median(cpp) - 1):+.2f} %, "
          f"fastest {100 * (min(py) / min(cpp) - 1):+.2f} %, median of the rounds' ratios "
          f"{100 * (median(ratios) - 1):+.2f} %  (target <= +5 %; "
          f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')})")

if __name__ == "__main__":
    main()
