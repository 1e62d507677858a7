// summary, top and growth on the captures that are not dumps (memleak.bt on a real process; PyTorch snapshots),
// through the CLI as a user runs it. Expected figures: the workload's counters (fixtures/ebpf/expected.json) and
// the simulation's (fixtures/torch/expected.json).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCaptured } from './run-captured.js';
import { FIXTURES } from '../../tools/fixtures.js';

const ROOT = join(FIXTURES, '..');
const cli = runCaptured;

describe('CLI on memleak and PyTorch captures', () => {
  it('top on memleak.bt: the leak first, frames as bcc names them; the maps copy names the never-named frame', async () => {
    const want = JSON.parse(readFileSync(join(ROOT, 'ebpf', 'expected.json'), 'utf8'));
    const maps = readdirSync(join(ROOT, 'ebpf')).find((n) => n.endsWith('.maps'))!;
    const r = await cli(
      'top',
      join(ROOT, 'ebpf', 'memleak.txt'),
      join(ROOT, 'ebpf', maps),
      '--json',
      '--symbols',
      join(ROOT, 'ebpf'),
    );
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.out);
    const first = doc.stacks[0];
    expect(first.liveBytes).toBe(want.leak_step.bytes);
    expect(first.frames[0]).toMatchObject({
      kind: 'native',
      function: expect.stringMatching(/^leak_step\+0x[0-9a-f]+ \[leaky-ebpf\]$/),
    });
    // stdio's buffer: printed [unknown] after the exit, named from the maps copy and libc's symbols
    const unknown = doc.stacks.find(
      (s: { frames: { address: string; function?: string }[] }) => !s.frames[0].address.startsWith('0x7079'),
    );
    expect(unknown?.frames[0].function ?? null).not.toBeNull();
  });

  it('summary on a PyTorch snapshot: per device state, peak, oom and spans; growth ranks the cache that grew', async () => {
    const want = JSON.parse(readFileSync(join(ROOT, 'torch', 'expected.json'), 'utf8'));
    const file = join(ROOT, 'torch', 'snapshot-p2.pickle');
    const s = JSON.parse((await cli('summary', file, '--json')).out);
    expect(s.processes.map((p: { gpu: { reservedBytes: number } }) => p.gpu.reservedBytes)).toEqual(
      want.devices.map((d: { reserved_bytes: number }) => d.reserved_bytes),
    );
    const text = (await cli('summary', file)).out;
    expect(text).toMatch(/OUT OF MEMORY at 2025-12-01 20:13:32\.820 UTC: 1\.50 MiB asked/);
    const g = await cli('growth', file, '--json');
    expect(g.code).toBe(0);
    const doc = JSON.parse(g.out);
    // the first stack: remember(), steady, and at its end the bytes the simulation kept in the cache
    const first = doc.stacks[0];
    expect(first.pattern).toBe('steady');
    expect(first.lastBytes).toBe(want.devices[0].active_by_leaf.remember.bytes);
    expect(first.frames[0].function).toBe('remember');
  });

  it('summary on one stacks="all" step: cached over time, the peak to open on, the record_function spans, an undated oom', async () => {
    const want = JSON.parse(readFileSync(join(ROOT, 'torch', 'expected.json'), 'utf8'));
    const c = want.cpp;
    const MiB = (n: number) => `${(n / 2 ** 20).toFixed(1)} MiB`.replace(/^(\d{3,})\.\d/, '$1');
    const text = (await cli('summary', join(ROOT, 'torch', c.file))).out.replace(/\n\s+/g, ' ');
    expect(text).toContain(`peak allocated ${MiB(c.peak_allocated_bytes)}`);
    // cached = reserved − allocated; the step's frees leave it at its most at the end
    expect(text).toContain(`cached at most ${MiB(c.reserved_end - c.allocated_end)}`);
    for (const [name, closed] of c.spans as [string, boolean][])
      expect(text).toMatch(new RegExp(`\\d{3}\\s+${closed ? '\\d+\\.\\d{3} ms' : 'open'}\\s+${name}`));
    expect(text).toMatch(/the peak is snapshot \d+ \(--snapshot \d+\)/);
    expect(text).not.toMatch(/pid \?|parent \?/);
    const oom = (await cli('summary', join(ROOT, 'torch', want.bounds.oom_time.file))).out;
    expect(oom).toMatch(/OUT OF MEMORY at time unknown: 1\.50 MiB asked/);
  });

  for (const which of ['file', 'rise_file'] as const)
    it(`a one-step snapshot (${which}) is judged by what the step did: the gradients it kept are a step scoring 0, never a steady leak`, async () => {
      const want = JSON.parse(readFileSync(join(ROOT, 'torch', 'expected.json'), 'utf8'));
      const doc = JSON.parse((await cli('growth', join(ROOT, 'torch', want.cpp[which]), '--json')).out);
      const by = Object.fromEntries(
        doc.stacks.map((s: { frames: { function: string }[]; pattern: string; score: number; lastBytes: number }) => [
          s.frames[0].function,
          [s.pattern, s.score, s.lastBytes],
        ]),
      );
      expect(by.zero_grad).toEqual(['step', 0, want.cpp.kept_by_step.zero_grad]);
      expect(by['(allocated before recording began)']).toEqual(['flat', 0, want.cpp.before_recording_bytes]);
      expect(doc.stacks.some((s: { pattern: string }) => s.pattern === 'steady')).toBe(false);
    });
});
