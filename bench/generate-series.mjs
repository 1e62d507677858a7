// Writes a synthetic but realistic heap_v2 series for benchmarks: P processes × S snapshots, each
// with `stacks` stacks of ~`depth` frames (a shared base plus distinct leaves), a few per-thread
// lines, sampled at 2^19, and a maps section. Leaking stacks grow linearly.
import { mkdirSync, openSync, writeSync, closeSync } from 'node:fs';
import { join } from 'node:path';

function rng(seed) {
  let s = seed >>> 0;
  return () => ((s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32);
}

const MAPS = `
MAPPED_LIBRARIES:
55a99b5ea000-55a99b5eb000 r--p 00000000 fe:00 2187282                    /opt/job/bin/trainer
55a99b5eb000-55a9a15eb000 r-xp 00001000 fe:00 2187282                    /opt/job/bin/trainer
7f7766a00000-7f7766a22000 r--p 00000000 fe:00 339000                     /usr/lib/x86_64-linux-gnu/libjemalloc.so.2
7f7766a22000-7f7766ab0000 r-xp 00022000 fe:00 339000                     /usr/lib/x86_64-linux-gnu/libjemalloc.so.2
7f7766845000-7f77669a0000 r-xp 00028000 fe:00 338950                     /usr/lib/x86_64-linux-gnu/libc.so.6
7ffe1d6d7000-7ffe1d6f8000 rw-p 00000000 00:00 0                          [stack]
`;

/** Writes one dump; returns its size in bytes. */
export function writeDump(path, { stacks, depth, step, seed }) {
  const r = rng(seed);
  const fd = openSync(path, 'w');
  let size = 0;
  let buf = '';
  const flush = (force) => {
    if (buf.length > (force ? 0 : 1 << 20)) {
      size += writeSync(fd, buf);
      buf = '';
    }
  };
  buf += `heap_v2/524288\n  t*: ${stacks * 3}: ${stacks * 3000000} [0: 0]\n  t0: ${stacks * 2}: ${stacks * 2000000} [0: 0] main\n  t1: ${stacks}: ${stacks * 1000000} [0: 0] data loader 1\n`;
  const alloc = '0x7f7766aa2630 0x7f7766aa2d21 0x7f7766a95f24 0x7f7766a22045';
  for (let i = 0; i < stacks; i++) {
    let frames = alloc;
    // Call sites come from a pool, as in a real program: leaves vary most, roots are shared.
    for (let d = 0; d < depth; d++) {
      const pool = d < depth / 2 ? 16384 : 256;
      const site = ((i >> (d < depth / 2 ? d % 8 : 10)) * 2654435761 + d * 40503) % pool;
      frames += ' 0x' + (0x55a99b5eb000 + site * 53 + d * 0x100000).toString(16);
    }
    const leak = i % 50 === 0;
    const objs = 1 + Math.floor(r() * 20) + (leak ? step * 5 : 0);
    const bytes = objs * (64 + (i % 4096) * 16);
    buf += `@ ${frames}\n  t*: ${objs}: ${bytes} [0: 0]\n  t${i % 2}: ${objs}: ${bytes} [0: 0]\n`;
    flush(false);
  }
  buf += MAPS;
  flush(true);
  closeSync(fd);
  return size;
}

/** P processes × S snapshots under dir; returns total bytes. */
export function writeSeries(dir, { processes, snapshots, stacks, depth }) {
  mkdirSync(dir, { recursive: true });
  let total = 0;
  for (let p = 0; p < processes; p++) {
    for (let s = 0; s < snapshots; s++) {
      total += writeDump(join(dir, `jeprof.${1000 + p}.${s}.i${s}.heap`), { stacks, depth, step: s, seed: p * 1000 + s });
    }
  }
  return total;
}
