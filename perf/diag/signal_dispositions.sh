# Which signals a `kspecter extract` catches, ignores and blocks over its run, sampled every
# 2 ms from /proc (SigCgt/SigIgn of the process; SigBlk of each thread once a temporary
# exists). Found the CUDA driver's handlers: it catches SIGTERM, SIGINT, SIGHUP and the
# fatal signals once CUDA starts, before kspecter writes anything.
#   bash perf/gpu_run.sh exec perf/diag/signal_dispositions.sh        (device: CUDA build)
#   KSPECTER_CLI=build/src/cli/kspecter bash perf/diag/signal_dispositions.sh   (here)
set -u
cli="${KSPECTER_CLI:?set KSPECTER_CLI to the kspecter executable}"
d="$(mktemp -d)"; trap 'rm -rf "$d"' EXIT
"$cli" make-psf -o "$d/psf.fits" --nfiber 20 --ccd 200,400 -w 6000,6200 --log-level quiet
"$cli" simulate -p "$d/psf.fits" -o "$d/img.fits" -w 6020,6180,0.8 --seed 3 --log-level quiet
"$cli" extract -i "$d/img.fits" -p "$d/psf.fits" -o "$d/fr.fits" -w 6020,6180,0.8 --bundlesize 10 \
  --nsubbundles 2 -m "$d/model.fits" --threads 1 --no-truth --log-level quiet & pid=$!
prev=""; shown=0
while kill -0 "$pid" 2>/dev/null; do
  s="$(grep -h 'SigCgt\|SigIgn' "/proc/$pid/status" 2>/dev/null | tr '\n\t' '  ')"
  n="$(ls "/proc/$pid/task" 2>/dev/null | wc -l)"
  t="$(ls -a "$d" | grep -c '\.tmp\.')"
  line="$s threads=$n temporaries=$t"
  [ "$line" != "$prev" ] && echo "$(date +%T.%N | cut -c1-12) $line"; prev="$line"
  if [ "$t" -gt 0 ] && [ "$shown" = 0 ]; then
    shown=1
    for tk in /proc/"$pid"/task/*; do
      echo "   thread $(basename "$tk") $(cat "$tk/comm") $(grep SigBlk "$tk/status" | tr '\t' ' ')"
    done
  fi
  sleep 0.002
done
wait "$pid"; echo "extract exit $?"
echo "(bits: 1 SIGHUP, 2 SIGINT, 4000 SIGTERM)"
