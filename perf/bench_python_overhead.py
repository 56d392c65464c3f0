#!/usr/bin/env python3
"""What a Python call adds: kspecter.extract_frame beside the C++ extract_frame of the same
frame (perf/bench_frame_call), both from float64 arrays in memory, same backend and threads.

Prints the median and fastest of --repeat calls (after one warm-up call each) and the Python
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
           "--repeat", str(args.repeat)]
    if args.threads:
        cmd += ["--threads", str(args.threads)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    print(out, end="")
    m = re.search(r"median ([0-9.]+) s, fastest ([0-9.]+) s", out)
    cpp_median, cpp_fastest = float(m.group(1)), float(m.group(2))

    import kspecter

    kspecter.initialize(backend=args.backend, threads=args.threads)
    img = kspecter.read_image(args.image)
    psf = kspecter.read_psf(args.psf)
    call = dict(bundlesize=args.bundlesize, specmin=args.specmin, nspec=args.nspec,
                wavelength=args.wavelength, nsubbundles=args.nsubbundles)
    seconds = []
    for r in range(args.repeat + 1):  # the first call warms up
        t0 = time.perf_counter()
        kspecter.extract_frame(img, psf, **call)
        dt = time.perf_counter() - t0
        if r:
            seconds.append(dt)
    seconds.sort()
    py_median, py_fastest = seconds[len(seconds) // 2], seconds[0]
    print(f"Python kspecter.extract_frame: median {py_median:.4f} s, fastest {py_fastest:.4f} s "
          f"over {args.repeat} calls")
    print(f"overhead of the Python call: median {100 * (py_median / cpp_median - 1):+.2f} %, "
          f"fastest {100 * (py_fastest / cpp_fastest - 1):+.2f} %  (target <= +5 %; "
          f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')})")


if __name__ == "__main__":
    main()
