#!/bin/sh
# What memleak.bt costs the traced process: fixtures/ebpf/leaky-ebpf run flat out (no pause between steps),
# untraced and traced, interleaved, RUNS times each; prints each run's busy seconds and allocator calls per
# second, and the median slowdown. Root and bpftrace needed. Usage: sh native-tools/ebpf/measure-cost.sh [RUNS] [ITER]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
runs=${1:-3}
iter=${2:-400}
bin=$(mktemp -d)/leaky-ebpf
gcc -O1 -g -fno-omit-frame-pointer -o "$bin" "$here/../../fixtures/ebpf/leaky-ebpf.c"
one() { # $1 = traced|untraced → prints "busy_seconds calls"
  "$bin" "$iter" 0 0 > "$bin.out" 2>/dev/null &
  w=$!
  sleep 0.2
  if [ "$1" = traced ]; then
    bpftrace "$here/memleak.bt" "$w" > "$bin.bt" 2>/dev/null &
    t=$!
    until grep -q '^Attaching to pid' "$bin.bt" 2>/dev/null; do sleep 0.1; done
  fi
  kill -USR1 "$w"
  wait "$w"
  if [ "$1" = traced ]; then kill -INT "$t"; wait "$t" || true; fi
  sed -E 's/.*"calls": ([0-9]+), "busy_seconds": ([0-9.]+).*/\2 \1/' "$bin.out"
}
i=0
: > "$bin.res"
while [ $i -lt "$runs" ]; do
  for mode in untraced traced; do
    set -- $(one $mode)
    echo "$mode $1 $2" | tee -a "$bin.res" | awk '{printf "%-9s %7.3f s  %9.0f calls/s\n", $1, $2, $3 / $2}'
  done
  i=$((i + 1))
done
med() { grep "^$1 " "$bin.res" | awk '{print $2}' | sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
u=$(med untraced)
t=$(med traced)
awk -v u="$u" -v t="$t" 'BEGIN { printf "median slowdown traced/untraced: %.1fx (%.3f s vs %.3f s)\n", t / u, t, u }'
