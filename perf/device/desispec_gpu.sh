#!/usr/bin/env bash
# Issue 37 on the GPU machine: desi_proc's GPU extraction layout (gpu_specter's
# ParallelIOCoordinator, 2 + 5 ranks a GPU) with kspecter in gpu_specter's place, on one GPU and,
# where the machine has two, on two; under MPS where the machine lets the MPS daemon start.
# perf/device/desispec_gpu_layout.py says what is reproduced and what is checked.
#
# Here, once (both folders are ignored; gpu_specter is never committed):
#   bash perf/device/python_cupy.sh stage                 # .gpu-python: CUDA Kokkos, CFITSIO, ERFA
#   stage .gpu-specter as perf/gpu_specter_inputs.py's head says (gpu_specter's py/, the r0
#   PSF and its gpu_specter dict as .npz), then: cp ../shared/data/psf-r0-00067784.fits .gpu-specter/
# Device call (kind nvidia-h100-x2, carry [".gpu-python", ".gpu-specter"], timeout_s 600):
#   bash perf/device/desispec_gpu.sh
# It builds the Python module and the CLI there with MPI (python_cupy.sh, build-device-mpi/),
# simulates a full r frame from the real r0 PSF with defects, extracts it with the CLI (the
# reference), then runs the layout on GPU 0 alone (7 ranks) and on GPUs 0 and 1 (12 ranks).
# Reports (JSON, one a layout) and logs come back under $OUT.
# here, out, psf (the r0 PSF in .gpu-specter), t0, note
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
b="$here/build-device-mpi"

python3 -c 'import mpi4py; from mpi4py import MPI; print("mpi4py", mpi4py.__version__, "on", MPI.Get_library_version().splitlines()[0])' 2>&1 | tee "$out/mpi.txt"
note "build (python_cupy.sh, MPI on)"
OUT=/tmp/desispec-build KSPECTER_DEVICE_BUILD="$b" KSPECTER_DEVICE_BUILD_ONLY=1 \
  KSPECTER_DEVICE_CMAKE_ARGS="-DKSPECTER_ENABLE_MPI=ON" \
  bash "$here/perf/device/python_cupy.sh" run > "$out/build.log" 2>&1 ||
  { tail -n 30 "$out/build.log"; cp /tmp/desispec-build/python-build.log "$out/" 2>/dev/null; exit 1; }
tail -n 3 "$out/build.log"

export LD_LIBRARY_PATH="/tmp/kspecter-kokkos-cuda/lib-use${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PYTHONPATH="$b/python" KSPECTER_CLI="$b/src/cli/kspecter" PYTHONUNBUFFERED=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 KOKKOS_DISABLE_WARNINGS=1
export OMP_NUM_THREADS=2
work=/tmp/desispec-gpu
mkdir -p "$work"
pre="$work/preproc-r0-00000001.fits"
grid=5760.0,7620.0,0.8

note "simulate and the CLI's frame (GPU 0)"
"$KSPECTER_CLI" simulate -p "$psf" -o "$pre" -w "$grid" --defects --seed 7 --log-level quiet
"$KSPECTER_CLI" extract -i "$pre" -p "$psf" -o "$work/frame-cli.fits" -w "$grid" --no-truth \
  2>&1 | tail -n 3
nvidia-smi --query-gpu=index,name,memory.total --format=csv,noheader | tee "$out/gpus.txt"
ngpu=$(grep -c . "$out/gpus.txt")

run_layout() {  # name, ranks, visible GPUs
  note "layout $1: $2 ranks on GPUs $3"
  CUDA_VISIBLE_DEVICES="$3" timeout 300 mpiexec -n "$2" --oversubscribe --bind-to none \
    -x PYTHONPATH -x LD_LIBRARY_PATH -x CUDA_VISIBLE_DEVICES -x OMP_NUM_THREADS \
    -x KOKKOS_DISABLE_WARNINGS -x PYTHONUNBUFFERED \
    python3 "$here/perf/device/desispec_gpu_layout.py" \
    --gpu-specter "$here/.gpu-specter/py" --psf-npz "$here/.gpu-specter/psf-r0.npz" \
    --preproc "$pre" --cli-frame "$work/frame-cli.fits" -w "$grid" \
    --report "$out/$1.json" > "$out/$1.log" 2>&1
  echo "layout $1: exit $?"
  tail -n 5 "$out/$1.log"
  [ -f "$out/$1.json" ] && python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print('checks', r['checks']); print('devices', [(x['rank'], x['role'], x['current_device']) for x in r['ranks']]); print('extract (worker root, first call: Kokkos start included)', r['extract_s'], 's, image on GPU', r['image_device'])" "$out/$1.json"
}

run_layout one-gpu 7 0
[ "$ngpu" -ge 2 ] && run_layout two-gpus 12 0,1

# MPS: the daemon may not start in this machine's sandbox; say so either way.
export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps-log
mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
if command -v nvidia-cuda-mps-control >/dev/null && nvidia-cuda-mps-control -d 2>"$out/mps.txt"; then
  sleep 2
  run_layout one-gpu-mps 7 0
  echo quit | nvidia-cuda-mps-control
  cat "$CUDA_MPS_LOG_DIRECTORY"/control.log >> "$out/mps.txt" 2>/dev/null
else
  echo "MPS: the daemon did not start ($(cat "$out/mps.txt" 2>/dev/null))" | tee -a "$out/mps.txt"
fi
note "done"
