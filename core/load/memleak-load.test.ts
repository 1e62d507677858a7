// memleak logs as the loader reads them: compressed by content through the bounded decompressing reader (issue 46
// S11), and as a stream of lines whatever their size (S4: a log of more than 512 MiB, generated here, never stored).
// Expected figures: the traced workload's own counters (fixtures/ebpf/expected.json) and the generator's arithmetic.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { loadJob } from './load-job.js';
import type { InputFile } from '../formats/input-file.js';
import { FIXTURES } from '../../tools/fixtures.js';

const EBPF = join(FIXTURES, '..', 'ebpf');
const mem = (path: string, b: Uint8Array, mtimeMs: number | null = null): InputFile => ({
  path,
  size: b.length,
  mtimeMs,
  read: async (o, l) => b.subarray(o, o + l),
});
const want = JSON.parse(readFileSync(join(EBPF, 'expected.json'), 'utf8')) as {
  leak_step: { bytes: number; blocks: number };
};

describe('memleak logs loaded', () => {
  it('memleak.txt.gz (and the spaces copy gzipped) read through the decompressing reader: the same figures', async () => {
    for (const name of ['memleak.bcc.txt', 'memleak.bcc-spaces.txt', 'memleak.libbpf.txt']) {
      const plain = readFileSync(join(EBPF, name));
      const job = await loadJob([mem(name + '.gz', new Uint8Array(gzipSync(plain)), Date.UTC(2026, 11, 1, 21))]);
      expect(job.processes).toHaveLength(1);
      const p = job.processes[0];
      expect(p.snapshots).toHaveLength(10);
      expect(p.snapshots.every((s) => s.format === 'memleak' && s.complete)).toBe(true);
      // the leak_step stack is the largest of the last report
      const last = p.snapshots[p.snapshots.length - 1];
      const k = last.liveBytes.indexOf(Math.max(...last.liveBytes));
      expect([name, last.liveBytes[k], last.liveObjects[k]]).toEqual([
        name,
        want.leak_step.bytes,
        want.leak_step.blocks,
      ]);
      expect(job.warnings.filter((w) => /not a|no stack/.test(w.message))).toEqual([]);
    }
  });

  it('a cut gzip copy keeps the reports before the damage and says where it stopped', async () => {
    const gz = gzipSync(readFileSync(join(EBPF, 'memleak.bcc.txt')));
    const job = await loadJob([mem('memleak.txt.gz', new Uint8Array(gz.subarray(0, gz.length - 40)))]);
    expect(job.processes[0].snapshots.length).toBeGreaterThan(0);
    expect(job.warnings.map((w) => w.message)).toContainEqual(expect.stringMatching(/gzip stream ends early/));
  });

  it('a log of more than 512 MiB is read as a stream of lines: every report, memory ~ the stacks', async () => {
    // one report: its -a address lines (what makes real logs large), then its stacks; the same report repeated
    const lines = ['[10:00:00] Top 10 stacks with outstanding allocations:'];
    const addrs = 20_000;
    for (let i = 0; i < addrs; i++) lines.push(`\taddr = ${(0x7f0000000000 + i * 64).toString(16)} size = 64`);
    lines.push('\t1280000 bytes in 20000 allocations from stack');
    lines.push('\t\t0x000055d0c3a0e1b3\tleak_step+0x13 [leaky]');
    lines.push('\t\t0x000055d0c3a0e2c0\tmain+0x5a [leaky]');
    const block = new TextEncoder().encode(lines.join('\n') + '\n');
    const reports = Math.ceil((513 * 1024 * 1024) / block.length);
    const size = reports * block.length;
    expect(size).toBeGreaterThan(512 * 1024 * 1024);
    const log: InputFile = {
      path: 'memleak.log',
      size,
      mtimeMs: Date.UTC(2026, 11, 1, 12),
      read: async (o, l) => {
        const n = Math.max(0, Math.min(l, size - o));
        const out = new Uint8Array(n);
        for (let w = 0; w < n;) {
          const at = (o + w) % block.length;
          const k = Math.min(n - w, block.length - at);
          out.set(block.subarray(at, at + k), w);
          w += k;
        }
        return out;
      },
    };
    const before = process.memoryUsage().heapUsed;
    const job = await loadJob([log]);
    const grew = process.memoryUsage().heapUsed - before;
    console.log(`memleak stream: ${size} bytes, ${reports} reports, heap +${Math.round(grew / 1048576)} MiB`);
    const p = job.processes[0];
    expect(p.snapshots).toHaveLength(reports);
    expect(p.snapshots.every((s) => s.live.bytes === 1280000 && s.live.objects === 20000)).toBe(true);
    expect(job.warnings.filter((w) => /longer|not read|internal/.test(w.message))).toEqual([]);
    // the file's text would be 2 bytes a character in a string: held whole, over 1 GiB
    expect(grew).toBeLessThan(256 * 1024 * 1024);
  }, 240_000);
});
