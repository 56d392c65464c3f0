#!/usr/bin/env python3
"""Strong-scaling plot of perf/scaling.sh results: time, speedup and efficiency per rank count.

    python3 perf/plot_scaling.py scaling.csv [more.csv ...] -o scaling.png

One line per (label, backend) found in the CSVs. Needs matplotlib (Debian: python3-matplotlib).
Prints the table it plots, so the numbers are in the log even without the picture.
"""
import argparse
import csv
import sys
from collections import defaultdict


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("csv", nargs="+", help="scaling.csv files written by perf/scaling.sh")
    ap.add_argument("-o", "--output", default="scaling.png", help="the PNG to write")
    ap.add_argument("--title", default="kspecter extract --batch: strong scaling on one exposure")
    args = ap.parse_args()

    series = defaultdict(list)
    for path in args.csv:
        with open(path, newline="") as f:
            for row in csv.DictReader(f):
                series[(row["label"], row["backend"])].append(row)
    if not series:
        sys.exit("plot_scaling: no rows in " + ", ".join(args.csv))

    print(f"{'machine':28s} {'backend':8s} {'ranks':>5s} {'frames':>6s} {'time [s]':>9s} "
          f"{'frames/s':>9s} {'speedup':>8s} {'efficiency':>10s}")
    for (label, backend), rows in sorted(series.items()):
        rows.sort(key=lambda r: int(r["ranks"]))
        for r in rows:
            print(f"{label:28s} {backend:8s} {int(r['ranks']):5d} {int(r['frames']):6d} {float(r['job_s']):9.2f} "
                  f"{float(r['frames_per_s']):9.2f} {float(r['speedup']):8.2f} {100 * float(r['efficiency']):9.1f}%")

    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        sys.exit("plot_scaling: matplotlib is missing (apt-get install python3-matplotlib); the table is above")

    fig, axes = plt.subplots(1, 3, figsize=(15, 4.5))
    top = 1
    for (label, backend), rows in sorted(series.items()):
        n = [int(r["ranks"]) for r in rows]
        name = f"{label} ({backend}, {rows[0]['frames']} frames x {rows[0]['spectra_per_frame']} spectra)"
        axes[0].plot(n, [float(r["job_s"]) for r in rows], "o-", label=name)
        axes[1].plot(n, [float(r["speedup"]) for r in rows], "o-", label=name)
        axes[2].plot(n, [100 * float(r["efficiency"]) for r in rows], "o-", label=name)
        for x, r in zip(n, rows):
            axes[0].annotate(f"{float(r['job_s']):.1f} s", (x, float(r["job_s"])), textcoords="offset points",
                             xytext=(4, 4), fontsize=8)
            axes[2].annotate(f"{100 * float(r['efficiency']):.0f}%", (x, 100 * float(r["efficiency"])),
                             textcoords="offset points", xytext=(4, -12), fontsize=8)
        top = max(top, max(n))
    ideal = list(range(1, top + 1))
    axes[1].plot(ideal, ideal, "k--", lw=0.8, label="ideal")
    axes[2].axhline(85, color="gray", ls=":", lw=0.8, label="85 % target")
    axes[0].set(xlabel="ranks (one GPU each, or CPU ranks)", ylabel="exposure time [s]", title="time")
    axes[0].set_yscale("log")
    axes[1].set(xlabel="ranks", ylabel="speedup", title="speedup")
    axes[2].set(xlabel="ranks", ylabel="parallel efficiency [%]", title="efficiency", ylim=(0, 110))
    for a in axes:
        a.set_xticks(ideal)
        a.grid(alpha=0.3)
    axes[1].legend(fontsize=7)
    axes[2].legend(fontsize=7, loc="lower left")
    fig.suptitle(args.title)
    fig.tight_layout()
    fig.savefig(args.output, dpi=120)
    print("plot_scaling: wrote", args.output)


if __name__ == "__main__":
    main()
