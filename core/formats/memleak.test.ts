// bcc memleak's report layout (iovisor/bcc tools/memleak.py: print_outstanding, print_outstanding_combined and
// the attach/execute lines) and memleak.bt's, on a capture of a real process (fixtures/ebpf/make-ebpf-fixture.sh).
// Expected figures of the capture come from the workload's own counters (fixtures/ebpf/expected.json).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { looksLikeMemleak, parseMemleak } from './memleak.js';
import { FIXTURES } from '../../tools/fixtures.js';

const EBPF = join(FIXTURES, '..', 'ebpf');

// the lines print_outstanding writes: "\t%d bytes in %d allocations from stack\n\t\t%s" with frames joined by
// "\n\t\t", each "0x%016x\t" + sym(show_module, show_offset); -a adds "\taddr = %x size = %s"
const DEFAULT = [
  'Attaching to pid 4242, Ctrl+C to quit.',
  '[23:59:58] Top 10 stacks with outstanding allocations:',
  '\taddr = 7f3a1c000b70 size = 65536',
  '\taddr = 7f3a1c010b70 size = 65536',
  '\t131072 bytes in 2 allocations from stack',
  '\t\t0x000055d0c3a0e1b3\tleak_step+0x13 [leaky]',
  '\t\t0x000055d0c3a0e2c0\tmain+0x5a [leaky]',
  '\t\t0x00007f7b0eb2324a\t[unknown] [libc.so.6]',
  '[00:00:03] Top 10 stacks with outstanding allocations:',
  '\t4096 bytes in 1 allocations from stack',
  '\t\t0x00007f13d711e8cc\t_IO_file_doallocate+0x8c [libc.so.6]',
  '\t327680 bytes in 5 allocations from stack',
  '\t\t0x000055d0c3a0e1b3\tleak_step+0x13 [leaky]',
  '\t\t0x000055d0c3a0e2c0\tmain+0x5a [leaky]',
  '',
].join('\n');

// print_outstanding_combined: frames without the address column; "stack information lost" when the id is gone
const COMBINED = [
  "Executing './train --steps 10' and tracing the resulting process.",
  'Attaching to pid 77, Ctrl+C to quit.',
  '[10:00:05] Top 5 stacks with outstanding allocations:',
  '\t100 bytes in 1 allocations from stack',
  '\t\tstack information lost',
  '\t2048 bytes in 4 allocations from stack',
  '\t\tgrow+0x1f [libjob.so]',
  '\t\t[unknown]',
  '',
].join('\n');

describe('parseMemleak', () => {
  it("reads bcc's default output with -a: reports, stacks, frames with addresses, midnight", () => {
    const m = parseMemleak(DEFAULT);
    expect(looksLikeMemleak(DEFAULT)).toBe(true);
    expect(m.pid).toBe(4242);
    expect(m.mode).toBe('default');
    expect(m.reports.map((r) => [r.secondsOfDay, r.day, r.allocationLines, r.stacks.length])).toEqual([
      [86398, 0, 2, 1],
      [3, 1, 0, 2],
    ]);
    const s = m.reports[0].stacks[0];
    expect([s.bytes, s.allocations]).toEqual([131072, 2]);
    expect(s.frames[0]).toEqual({
      text: 'leak_step+0x13 [leaky]',
      symbol: 'leak_step',
      offset: '0x13',
      module: 'leaky',
      address: '0x55d0c3a0e1b3',
    });
    expect(s.frames[2]).toMatchObject({ symbol: null, module: 'libc.so.6', address: '0x7f7b0eb2324a' });
    expect(m.problems).toEqual([]);
    expect(m.reports.every((r) => r.complete)).toBe(true);
  });

  it('reads --combined-only: no address column, the command, lost stacks', () => {
    const m = parseMemleak(COMBINED);
    expect(m.command).toBe('./train --steps 10');
    expect(m.mode).toBe('combined');
    const [lost, grow] = m.reports[0].stacks;
    expect(lost.frames).toEqual([
      { text: 'stack information lost', symbol: null, offset: null, module: null, address: null },
    ]);
    expect(grow.frames.map((f) => [f.symbol, f.module, f.address])).toEqual([
      ['grow', 'libjob.so', null],
      [null, null, null],
    ]);
  });

  it('marks a report cut mid-way (no final newline, a stack without frames) and names the line', () => {
    const cut = DEFAULT.slice(0, DEFAULT.indexOf('\t\t0x000055d0c3a0e1b3', DEFAULT.lastIndexOf('327680')) + 10);
    const m = parseMemleak(cut);
    expect(m.reports[1].complete).toBe(false);
    expect(m.reports[0].complete).toBe(true);
    expect(m.problems[0].message).toMatch(/ends inside its last report/);
    const noFrames = parseMemleak(DEFAULT.slice(0, DEFAULT.lastIndexOf('\t\t0x000055d0c3a0e1b3')));
    expect(noFrames.reports[1].complete).toBe(false);
  });

  it('skips lines it does not know and refuses counts that are not sizes', () => {
    const m = parseMemleak(
      '[10:00:00] Top 1 stacks with outstanding allocations:\nWARNING: 3 stack traces lost\n\t99999999999999999999 bytes in 1 allocations from stack\n\t\tx+0x1 [a]\n',
    );
    // the warning, and the frame of the refused stack
    expect(m.skippedLines).toBe(2);
    expect(m.reports[0].stacks).toEqual([]);
    expect(m.problems[0]).toMatchObject({ line: 3, message: expect.stringMatching(/not sizes/) });
    expect(parseMemleak('hello\n').problems[0].message).toMatch(/no "\[HH:MM:SS\] Top N stacks/);
  });

  it("reads memleak.bt's capture of a real process: the workload's own counters in the last report", () => {
    const text = readFileSync(join(EBPF, 'memleak.txt'), 'utf8');
    const want = JSON.parse(readFileSync(join(EBPF, 'expected.json'), 'utf8')) as {
      leak_step: { bytes: number; blocks: number };
      keep_aligned: { bytes: number; blocks: number };
      calls: number;
    };
    const m = parseMemleak(text);
    expect(m.mode).toBe('bpftrace');
    expect(m.date?.offsetMinutes).not.toBeNull();
    expect(m.reports.length).toBeGreaterThanOrEqual(3);
    const last = m.reports.filter((r) => r.complete).pop()!;
    const by = (fn: string) => last.stacks.filter((s) => s.frames[0]?.symbol === fn);
    const sum = (xs: { bytes: number; allocations: number }[]) =>
      xs.reduce((a, s) => ({ bytes: a.bytes + s.bytes, blocks: a.blocks + s.allocations }), { bytes: 0, blocks: 0 });
    expect(sum(by('leak_step'))).toEqual(want.leak_step);
    // posix_memalign and calloc: two call sites in keep_aligned, so two stacks
    expect(by('keep_aligned').length).toBe(2);
    expect(sum(by('keep_aligned'))).toEqual(want.keep_aligned);
    expect(by('churn')).toEqual([]);
    // every malloc/calloc/realloc/posix_memalign/aligned_alloc/free the workload made was traced (plus stdio's
    // one buffer, allocated by printf after the workload counted)
    expect(last.calls! - want.calls).toBeGreaterThanOrEqual(0);
    expect(last.calls! - want.calls).toBeLessThanOrEqual(2);
    expect(last.stacks[0].frames[0].text).toMatch(/^(\[unknown\]|\S+\+0x[0-9a-f]+)( \[[^\]]+\])?$/);
  });

  it('a memleak.bt report cut while printing (no "# end of report") is partial', () => {
    const text = readFileSync(join(EBPF, 'memleak.txt'), 'utf8');
    const cut = text.slice(0, text.lastIndexOf('@outstanding_allocs['));
    const m = parseMemleak(cut);
    expect(m.reports[m.reports.length - 1].complete).toBe(false);
    expect(m.problems.some((p) => /no "# end of report"/.test(p.message))).toBe(true);
  });
});
