"""Python-call-heavy allocation benchmark for bench/python-capture-bench.sh.

Each iteration recurses 30 Python calls deep; every leaf allocates an 800-byte bytearray (malloc with
PYTHONMALLOC=malloc) and a small list, keeps a few alive in a ring, frees the rest. Prints one JSON line:
CPU seconds of this process, wall seconds, iterations. With HEAPLENS_BENCH_DUMP=<path> it asks
jemalloc for a dump at the end (the capture library then writes its table with its counters).
"""
import ctypes
import json
import os
import sys
import time

DEPTH = 30
ring = [None] * 256


def leaf(i):
    b = bytearray(800)
    ring[i & 255] = [b, i]
    return len(b)


def down(n, i):
    if n == 0:
        return leaf(i)
    return down(n - 1, i) + 1


def main(seconds):
    t0, c0 = time.perf_counter(), time.process_time()
    iters = 0
    deadline = t0 + seconds
    while True:
        for _ in range(200):
            down(DEPTH, iters)
            iters += 1
        if time.perf_counter() >= deadline:
            break
    cpu = time.process_time() - c0
    wall = time.perf_counter() - t0
    dump = os.environ.get("HEAPLENS_BENCH_DUMP")
    if dump:
        lib = ctypes.CDLL(None)
        lib.mallctl.argtypes = [ctypes.c_char_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t]
        name = ctypes.c_char_p(dump.encode())
        lib.mallctl(b"prof.dump", None, None, ctypes.byref(name), ctypes.sizeof(name))
    print(json.dumps({"cpu": cpu, "wall": wall, "iters": iters}))


if __name__ == "__main__":
    main(float(sys.argv[1]) if len(sys.argv) > 1 else 0.6)
