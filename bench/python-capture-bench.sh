#!/usr/bin/env bash
# Python-call-heavy benchmark of the capture library (about 10 s in total):
#   A plain Python (glibc malloc)      B + jemalloc (prof off)
#   C + jemalloc prof:true (default lg_prof_sample:19, native stacks only)
#   D + libheaplens_capture.so (Python frames and the context) with a dump every 64 MiB allocated
#     (lg_prof_interval:26), as a job profiled for a post-mortem would run
#   E C with the same dumps, without the library: what jemalloc's own dumps cost
#   F D's library with the memory policy on instead of interval dumps: the heaplens-watch thread polls
#     statm and the cgroup every 100 ms, a dump whenever RSS grew at all (HEAPLENS_DUMP_RSS_STEP=1),
#     at most one a second (HEAPLENS_DUMP_MIN_INTERVAL=1s), the ring on (HEAPLENS_DUMP_KEEP=4): about
#     one memory-driven dump per second of the run (run 3 s or longer: `... 6 3`)
#   G with CAPTURE_BASE=<another libheaplens_capture.so> set: D with that build (a before/after comparison in
#     one run: paired D/G per round)
# Configurations are interleaved over rounds; each run reports its own CPU time per iteration (all
# threads: the library's context thread counts).
# Prints the median and the best (least disturbed) CPU cost per iteration relative to A, the median of the
# paired per-round ratios D/A and F/A, then the watcher's CPU per second and the cost of one memory-driven
# dump (a separate run of F with HEAPLENS_CAPTURE_TIMING=1), then the per-sample cost of the hook
# (jemalloc's native unwind vs the Python walk) measured in-process (HEAPLENS_CAPTURE_TIMING=1) in a
# denser-sampled run (lg_prof_sample:14) so there are enough samples.
#
# usage: [CAPTURE=<lib>] [CAPTURE_BASE=<lib>] bench/python-capture-bench.sh [python] [rounds] [seconds-per-run]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/.." && pwd)"
PY="${1:-${PY312:-/root/.pyenv/versions/3.12.1/bin/python3.12}}"
ROUNDS="${2:-4}"
SECS="${3:-1.5}"
JEMALLOC="${JEMALLOC:-/usr/lib/x86_64-linux-gnu/libjemalloc.so.2}"
CAPTURE="${CAPTURE:-$repo/native-tools/capture/build/libheaplens_capture.so}"
[ -e "$CAPTURE" ] || bash "$repo/native-tools/capture/build.sh" >&2
CAPTURE_BASE="${CAPTURE_BASE:-}"
[ -z "$CAPTURE_BASE" ] || [ -e "$CAPTURE_BASE" ] || { echo "CAPTURE_BASE=$CAPTURE_BASE: no such file" >&2; exit 1; }
[ -e "$JEMALLOC" ] || { echo "needs Debian's libjemalloc2 ($JEMALLOC)" >&2; exit 1; }
W="$here/python-capture-workload.py"
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
export PYTHONMALLOC=malloc

policy_env() { # the memory policy of configuration F (the fractions only add the cgroup reads where no limit is set)
  env HEAPLENS_DUMP_RSS_STEP=1 HEAPLENS_DUMP_MIN_INTERVAL=1s HEAPLENS_DUMP_CGROUP_FRACTIONS=0.8,0.9,0.95 \
    HEAPLENS_DUMP_KEEP=4 "$@"
}

run() { # config -> prints cpu-per-iteration in µs
  local cfg="$1" out
  case "$cfg" in
    A) out="$(env -u LD_PRELOAD "$PY" "$W" "$SECS")" ;;
    B) out="$(LD_PRELOAD="$JEMALLOC" "$PY" "$W" "$SECS")" ;;
    C) out="$(LD_PRELOAD="$JEMALLOC" MALLOC_CONF=prof:true "$PY" "$W" "$SECS")" ;;
    D) mkdir -p "$tmp/d"
       out="$(LD_PRELOAD="$JEMALLOC $CAPTURE" MALLOC_CONF="prof:true,lg_prof_interval:26,prof_prefix:$tmp/d/bench" "$PY" "$W" "$SECS")" ;;
    E) mkdir -p "$tmp/e"
       out="$(LD_PRELOAD="$JEMALLOC" MALLOC_CONF="prof:true,lg_prof_interval:26,prof_prefix:$tmp/e/bench" "$PY" "$W" "$SECS")" ;;
    G) mkdir -p "$tmp/g0"
       out="$(LD_PRELOAD="$JEMALLOC $CAPTURE_BASE" MALLOC_CONF="prof:true,lg_prof_interval:26,prof_prefix:$tmp/g0/bench" "$PY" "$W" "$SECS")" ;;
    F) mkdir -p "$tmp/f"
       out="$(policy_env LD_PRELOAD="$JEMALLOC $CAPTURE" MALLOC_CONF="prof:true,prof_prefix:$tmp/f/bench" "$PY" "$W" "$SECS" 2>/dev/null)" ;;
  esac
  "$PY" -c 'import json,sys; d=json.loads(sys.argv[1]); print(1e6*d["cpu"]/d["iters"])' "$out"
}

echo "python: $("$PY" -c 'import sys; print(sys.version.split()[0])')  rounds: $ROUNDS x ${SECS}s  ($(nproc) CPUs, load $(cut -d' ' -f1 /proc/loadavg))"
declare -A res=()
pairs=""
fpairs=""
gpairs=""
dgpairs=""
configs='A B C D E F'
[ -z "$CAPTURE_BASE" ] || configs+=' G'
for r in $(seq "$ROUNDS"); do
  declare -A this=()
  for cfg in $(printf '%s\n' $configs | shuf); do this[$cfg]="$(run "$cfg")"; res[$cfg]+="${this[$cfg]} "; done
  pairs+="$(awk -v d="${this[D]}" -v a="${this[A]}" 'BEGIN { print d / a }') "
  fpairs+="$(awk -v d="${this[F]}" -v a="${this[A]}" 'BEGIN { print d / a }') "
  if [ -n "$CAPTURE_BASE" ]; then
    gpairs+="$(awk -v d="${this[G]}" -v a="${this[A]}" 'BEGIN { print d / a }') "
    dgpairs+="$(awk -v d="${this[D]}" -v g="${this[G]}" 'BEGIN { print d / g }') "
  fi
done
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
minimum() { tr ' ' '\n' | grep -v '^$' | sort -g | head -1; }
a="$(echo "${res[A]}" | median)"
amin="$(echo "${res[A]}" | minimum)"
for cfg in A B C E D F $([ -z "$CAPTURE_BASE" ] || echo G); do
  m="$(echo "${res[$cfg]}" | median)"
  mn="$(echo "${res[$cfg]}" | minimum)"
  label=$(case $cfg in A) echo "plain python (glibc)";; B) echo "jemalloc, prof off";; C) echo "jemalloc prof:true lg19, native only";; D) echo "jemalloc prof lg19 + capture + ctx, dump/64MiB";; G) echo "D with CAPTURE_BASE";; E) echo "jemalloc prof lg19, dump/64MiB, no capture";; F) echo "jemalloc prof lg19 + capture + memory policy";; esac)
  awk -v l="$label" -v c="$cfg" -v m="$m" -v a="$a" -v mn="$mn" -v amin="$amin" \
    'BEGIN { printf "%s %-48s median %6.2f us/iter %.3fx plain   best %6.2f us/iter %.3fx plain\n", c, l, m, m / a, mn, mn / amin }'
done

ndumps="$(ls "$tmp/d" | grep -c '\.heap$' || true)"
echo "D paired ratio (D/A per round), median: $(echo "$pairs" | median)x   [$(echo $pairs)]   $ndumps interval dumps in $ROUNDS D runs, $(ls "$tmp/d" | grep -c '\.heap\.pyframes$' || true) tables"
[ -z "$CAPTURE_BASE" ] || echo "G paired ratio (G/A per round), median: $(echo "$gpairs" | median)x   [$(echo $gpairs)];  D/G per round, median: $(echo "$dgpairs" | median)x   [$(echo $dgpairs)]   (G: $CAPTURE_BASE, $(ls "$tmp/g0" | grep -c '\.heap$' || true) interval dumps)"
echo "F paired ratio (F/A per round), median: $(echo "$fpairs" | median)x   [$(echo $fpairs)]   $(ls "$tmp/f" | grep -c '\.heap$' || true) dumps kept by the ring in $ROUNDS F runs"

# the watcher's own cost and each memory-driven dump's, recorded by the library (HEAPLENS_CAPTURE_TIMING=1:
# a "# watch" line in every table); one run of F twice as long, its last table read
mkdir -p "$tmp/g"
policy_env LD_PRELOAD="$JEMALLOC $CAPTURE" MALLOC_CONF="prof:true,prof_prefix:$tmp/g/bench" HEAPLENS_CAPTURE_TIMING=1 \
  HEAPLENS_BENCH_DUMP="$tmp/g/last.heap" "$PY" "$W" "$(awk -v s="$SECS" 'BEGIN { print 2 * s }')" >/dev/null 2>&1
"$PY" - "$tmp/g/last.heap.pyframes" <<'PYEOF'
import statistics, sys
line = next(l for l in open(sys.argv[1]) if l.startswith("# watch "))
kv = dict(x.split("=", 1) for x in line.split()[2:])
ns = [int(x) for x in kv["dump_ns"].split(",") if x]
polls, cpu, wall = int(kv["polls"]), int(kv["poll_cpu_ns"]), int(kv["wall_ns"])
print(f"watcher: {polls} polls in {wall / 1e9:.1f} s, {cpu / polls / 1e3:.1f} us CPU per poll, {cpu / (wall / 1e9) / 1e3:.0f} us CPU per second ({100 * cpu / wall:.3f} % of a CPU); "
      f"memory-driven dump (prof.dump from the watcher, context and sidecar included), {len(ns)} dumps: median {statistics.median(ns) / 1e3:.0f} us, max {max(ns) / 1e3:.0f} us")
PYEOF

# the context's cost per dump on the dumping thread (ctx_cost_ns, recorded in every table) and how long
# after the dump the context thread read jemalloc's stats (je_delay_ns): 100 manual dumps, 5 ms apart
# (back-to-back dumps would starve the thread: each next dump takes jemalloc's dump lock first)
dump_loop() { # <dir> [env...]: 100 manual dumps 5 ms apart; prints the median prof.dump call time in us
  local d="$1"; shift; mkdir -p "$d"
  env "$@" LD_PRELOAD="$JEMALLOC $CAPTURE" MALLOC_CONF="prof:true,prof_prefix:$d/c" "$PY" - <<'PYEOF'
import ctypes, statistics, time
lib = ctypes.CDLL(None)
lib.mallctl.argtypes = [ctypes.c_char_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t]
keep = [bytearray(1000) for _ in range(20000)]
t = []
for _ in range(100):
    t0 = time.perf_counter()
    lib.mallctl(b"prof.dump", None, None, None, 0)
    t.append(time.perf_counter() - t0)
    time.sleep(0.005)
print(f"{statistics.median(t) * 1e6:.0f}")
PYEOF
}
with_ctx="$(dump_loop "$tmp/ctx")"; no_ctx="$(dump_loop "$tmp/noctx" HEAPLENS_CAPTURE_CONTEXT=0)"
with_ctx2="$(dump_loop "$tmp/ctx2")"; no_ctx2="$(dump_loop "$tmp/noctx2" HEAPLENS_CAPTURE_CONTEXT=0)"
echo "prof.dump call on the dumping thread, median of 100: with context ${with_ctx}/${with_ctx2} us, HEAPLENS_CAPTURE_CONTEXT=0 ${no_ctx}/${no_ctx2} us (two runs each)"
sleep 0.2
"$PY" - "$tmp/ctx" <<'PYEOF'
import glob, statistics, sys
cost, delay, tables = [], [], glob.glob(sys.argv[1] + "/*.pyframes")
for f in tables:
    for line in open(f):
        if line.startswith("C ctx_cost_ns "): cost.append(int(line.split()[2]))
        if line.startswith("C je_delay_ns "): delay.append(int(line.split()[2]))
cost.sort(); delay.sort()
q = lambda v, p: v[min(len(v) - 1, int(p * len(v)))] / 1e3
print(f"context per dump ({len(cost)} dumps): collect on the dumping thread median {q(cost, .5):.0f} us, p90 {q(cost, .9):.0f} us, max {q(cost, 1):.0f} us; "
      f"jemalloc stats read {q(delay, .5):.0f} us (median, p90 {q(delay, .9):.0f} us) after the dump; {len(tables) - len(delay)} of {len(tables)} tables without them")
PYEOF

# per-sample cost, measured inside the hook: mean (sum / samples) and median (from the log2 histogram,
# interpolated inside the bucket; robust to the odd preempted sample on a loaded machine)
for lg in 19 14; do
  LD_PRELOAD="$JEMALLOC $CAPTURE" MALLOC_CONF="prof:true,lg_prof_sample:$lg" HEAPLENS_CAPTURE_TIMING=1 \
    HEAPLENS_BENCH_DUMP="$tmp/t$lg.heap" "$PY" "$W" "$SECS" >/dev/null
  "$PY" - "$tmp/t$lg.heap.pyframes" "$lg" <<'PYEOF'
import sys
lines = open(sys.argv[1]).read().split("\n")
stats = dict(kv.split("=", 1) for kv in lines[1][1:].split() if "=" in kv)
hist = dict(kv.split("=", 1) for kv in lines[2][1:].split()[1:])
def median_us(counts):
    c = [int(x) for x in counts.split(",")]
    half, run = sum(c) / 2, 0
    for k, n in enumerate(c):
        if run + n >= half:
            return (2 ** k + (half - run) / n * 2 ** k) / 1000
        run += n
s = int(stats["samples"])
print(f"per sample (lg_prof_sample:{sys.argv[2]}, {s} samples, {stats['merged']} merged): "
      f"native unwind mean {int(stats['native_ns']) / s / 1000:.2f} us, median {median_us(hist['native']):.2f} us; "
      f"Python walk+merge mean {int(stats['python_ns']) / s / 1000:.2f} us, median {median_us(hist['python']):.2f} us")
PYEOF
done
ls -l "$tmp"/t14.heap "$tmp"/t14.heap.pyframes | awk '{print "dump sizes (lg 14): " $5 " B " $9}'
