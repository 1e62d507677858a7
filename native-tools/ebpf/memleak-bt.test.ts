// memleak.bt on a live process here: fixtures/ebpf/make-ebpf-fixture.sh traces a fresh run of the workload into a
// temporary folder, and heaplens reads the capture; the figures must equal the workload's own counters.
// Skipped, with the reason, without bpftrace or root (the committed capture is tested in core/formats/memleak.test.ts).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseMemleak } from '../../core/formats/memleak.js';

const script = resolve(import.meta.dirname, '..', '..', 'fixtures', 'ebpf', 'make-ebpf-fixture.sh');
const why =
  spawnSync('bpftrace', ['--version']).status !== 0
    ? 'bpftrace is not installed (apt-get install bpftrace)'
    : process.getuid?.() !== 0
      ? 'bpftrace needs root to attach uprobes'
      : spawnSync('gcc', ['--version']).status !== 0
        ? 'gcc is not installed'
        : null;
if (why) console.warn(`memleak-bt.test: skipped: ${why}`);

describe.skipIf(why !== null)('memleak.bt on a live process', () => {
  it("its reports, read by heaplens, equal the workload's counters", { timeout: 180_000 }, () => {
    const out = mkdtempSync(join(tmpdir(), 'heaplens-ebpf-'));
    const r = spawnSync('sh', [script, out, '60'], { encoding: 'utf8', timeout: 170_000 });
    expect(r.status, r.stderr).toBe(0);
    const want = JSON.parse(readFileSync(join(out, 'expected.json'), 'utf8')) as {
      leak_step: { bytes: number; blocks: number };
      keep_aligned: { bytes: number; blocks: number };
      calls: number;
    };
    const text = readFileSync(join(out, 'memleak.txt'), 'utf8');
    const m = parseMemleak(text);
    const last = m.reports.filter((x) => x.complete).pop()!;
    // on a failure: the script's phase times and the report judged, as the tracer printed it
    const context = `${r.stderr}\nthe report judged (line ${last?.line}):\n${text
      .split('\n')
      .slice((last?.line ?? 1) - 1)
      .slice(0, 60)
      .join('\n')}`;
    const at = (fn: string) =>
      last.stacks
        .filter((s) => s.frames[0]?.symbol === fn)
        .reduce((a, s) => ({ bytes: a.bytes + s.bytes, blocks: a.blocks + s.allocations }), { bytes: 0, blocks: 0 });
    expect(last, context).toBeDefined();
    expect(at('leak_step'), context).toEqual({ bytes: 60 * 65536, blocks: 60 });
    expect(at('leak_step'), context).toEqual(want.leak_step);
    expect(at('keep_aligned'), context).toEqual(want.keep_aligned);
    expect(last.calls! - want.calls, context).toBeGreaterThanOrEqual(0);
    expect(last.calls! - want.calls, context).toBeLessThanOrEqual(2);
  });
});
