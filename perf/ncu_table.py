#!/usr/bin/env python3
"""Per-kernel table (markdown) from an Nsight Compute raw CSV export.

    ncu -i report.ncu-rep --page raw --csv > raw.csv
    perf/ncu_table.py raw.csv [--all]

One row per kernel launch (Kokkos' View-initialisation and start-up kernels are left out
unless --all): its Kokkos label (from the functor's type), block x grid, time, DRAM bytes and
throughput, L2 throughput, fp64 flops and rate (2 dfma + dadd + dmul, from the SASS
counters) and the fp64 pipe's busy share, achieved / theoretical occupancy, registers,
shared memory per block and local-memory traffic (spills and stack arrays). Needs the
sections of `--set full` (or SpeedOfLight, LaunchStats, Occupancy, MemoryWorkloadAnalysis,
ComputeWorkloadAnalysis and the SASS instruction counters).
"""
import csv
import re
import sys

LABELS = [
    ("SpotKernel", "psf::spots"),
    ("PixelWindows", "extract::pixel_windows"),
    ("SanitizeWeights", "extract::sanitize_weights"),
    ("AssembleICov", "extract::assemble_icov"),
    ("ApplyPrior", "extract::prior"),
    ("band_cholesky_solve_impl", "solve::band_cholesky_solve"),
    ("band_cholesky_impl", "solve::band_cholesky"),
    ("band_strided_inverse_blocks_impl", "solve::band_strided_inverse_blocks"),
    ("pack_band_impl", "solve::pack_band"),
    ("cholesky_solve_impl", "solve::cholesky_solve"),
    ("cholesky_impl", "solve::cholesky"),
    ("RepairFailed", "extract::repair_failed"),
    ("inverse_diagonal_blocks", "solve::inverse_blocks"),
    ("GatherCoreBlocks", "extract::gather_core_blocks"),
    ("inverse_sqrt_impl", "solve::inverse_sqrt"),
    ("Decorrelate", "extract::decorrelate"),
    ("RowRanges", "extract::row_ranges"),
    ("ModelChi2", "extract::model_chi2"),
    ("Chi2PixMask", "extract::chi2pix"),
    ("FrameModel", "extract::frame_model"),
    ("BandFromSpots", "extract::band_from_spots"),
    ("ReorderRhs", "extract::rhs_to/from_band"),
    ("CoreSlots", "extract::core_slots"),
    ("ViewFill", "Kokkos::ViewFill (zeroing)"),
    ("ViewValueFunctor", "(View initialisation)"),
    ("ViewCopy", "(View copy)"),
]

SCALE = {"byte": 1, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9, "Tbyte": 1e12,
         "byte/block": 1, "Kbyte/block": 1e3, "Mbyte/block": 1e6,
         "ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1,
         "nsecond": 1e-9, "usecond": 1e-6, "msecond": 1e-3, "second": 1}


def label(name):
    for key, lab in LABELS:
        if key in name:
            return lab
    m = re.search(r"ParallelFor<[^<]*?(\w+)\(", name)
    return m.group(1) if m else name[:60]


def main():
    path = sys.argv[1]
    show_all = "--all" in sys.argv
    rows = list(csv.reader(open(path)))
    hdr, units = rows[0], rows[1]
    col = {h: i for i, h in enumerate(hdr)}

    def val(r, name, default=0.0):
        i = col.get(name)
        if i is None or r[i] in ("", "n/a", "no data"):
            return default
        try:
            v = float(r[i].replace(",", ""))
        except ValueError:
            return default
        return v * SCALE.get(units[i], 1)

    out = []
    for r in rows[2:]:
        name = r[col["Kernel Name"]]
        lab = label(name)
        if not show_all and (lab.startswith("(") or "init_lock_array" in name
                             or "query_cuda_kernel_arch" in name):
            continue
        t = val(r, "gpu__time_duration.sum")
        dram = val(r, "dram__bytes_read.sum") + val(r, "dram__bytes_write.sum")
        l2 = val(r, "lts__t_sectors.sum") * 32
        cyc = val(r, "smsp__cycles_elapsed.avg")
        ops = (2 * val(r, "smsp__sass_thread_inst_executed_op_dfma_pred_on.sum.per_cycle_elapsed")
               + val(r, "smsp__sass_thread_inst_executed_op_dadd_pred_on.sum.per_cycle_elapsed")
               + val(r, "smsp__sass_thread_inst_executed_op_dmul_pred_on.sum.per_cycle_elapsed")) * cyc
        local = (val(r, "l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum")
                 + val(r, "l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum")) * 32
        out.append(dict(
            label=lab, block=r[col["Block Size"]], grid=r[col["Grid Size"]], t=t,
            dram=dram, dram_bw=dram / t if t else 0,
            dram_pct=val(r, "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
                         val(r, "dram__bytes_read.sum.pct_of_peak_sustained_elapsed")),
            l2_bw=l2 / t if t else 0, l2_pct=val(r, "lts__t_sectors.sum.pct_of_peak_sustained_elapsed"),
            flops=ops, rate=ops / t if t else 0,
            fp64_pct=val(r, "sm__pipe_fp64_cycles_active.avg.pct_of_peak_sustained_elapsed"),
            occ=val(r, "sm__warps_active.avg.pct_of_peak_sustained_active"),
            occ_th=val(r, "sm__maximum_warps_per_active_cycle_pct"),
            regs=val(r, "launch__registers_per_thread"),
            smem=(val(r, "launch__shared_mem_per_block_dynamic")
                  + val(r, "launch__shared_mem_per_block_static")) / 1e3,
            local=local, spill=val(r, "derived__local_spilling_requests")))
    print("| kernel | block x grid | time [ms] | DRAM [GB] | DRAM [TB/s] | L2 [TB/s] (% peak) "
          "| fp64 [GFLOP] | fp64 [TFLOP/s] | fp64 pipe % | occupancy achieved / theor. % "
          "| regs | smem [KB] | local [MB] |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for o in out:
        print(f"| {o['label']} | {o['block']} x {o['grid']} | {o['t'] * 1e3:.3f} | "
              f"{o['dram'] / 1e9:.3f} | {o['dram_bw'] / 1e12:.2f} | {o['l2_bw'] / 1e12:.2f} "
              f"({o['l2_pct']:.0f}) | {o['flops'] / 1e9:.2f} | {o['rate'] / 1e12:.2f} | "
              f"{o['fp64_pct']:.1f} | {o['occ']:.0f} / {o['occ_th']:.0f} | {o['regs']:.0f} | "
              f"{o['smem']:.1f} | {o['local'] / 1e6:.1f} |")


if __name__ == "__main__":
    main()
