#!/bin/sh
# memleak.sh PID — runs memleak.bt on the allocator PID actually uses: libc's, or jemalloc's when the process
# maps libjemalloc (linked or LD_PRELOADed), by pointing the same probes at that library. Root needed.
set -eu
pid=${1:?usage: memleak.sh PID}
here=$(cd "$(dirname "$0")" && pwd)
lib=$(awk '$6 ~ /\/libjemalloc[^\/]*\.so/ { print $6; exit }' "/proc/$pid/maps")
if [ -z "$lib" ]; then exec bpftrace "$here/memleak.bt" "$pid"; fi
echo "# allocator: $lib" >&2
exec bpftrace -e "$(sed -e "s|uprobe:libc:|uprobe:$lib:|g" -e "s|uretprobe:libc:|uretprobe:$lib:|g" "$here/memleak.bt")" "$pid"
