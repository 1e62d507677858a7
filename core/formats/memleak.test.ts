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

// The same capture in the layouts of bcc (tabs, and spaces as copied from a terminal), libbpf-tools' C memleak and
// the stacks alone (fixtures/ebpf/make-memleak-variants.py writes them with each tool's print statements); the
// figures are the workload's own counters.
describe('other memleak layouts of the real capture', () => {
  const want = JSON.parse(readFileSync(join(EBPF, 'expected.json'), 'utf8')) as {
    leak_step: { bytes: number; blocks: number };
    keep_aligned: { bytes: number; blocks: number };
  };
  const sum = (xs: { bytes: number; allocations: number }[]) =>
    xs.reduce((a, s) => ({ bytes: a.bytes + s.bytes, blocks: a.blocks + s.allocations }), { bytes: 0, blocks: 0 });
  const bt = parseMemleak(readFileSync(join(EBPF, 'memleak.txt'), 'utf8'));
  // the return addresses memleak.bt named: the copies of late reports print them [unknown], as the process had
  // exited; the reader lends a name printed for an address in one report to the others
  const addressOf = (fn: string) =>
    bt.reports.flatMap((r) => r.stacks).find((s) => s.frames[0]?.symbol === fn)!.frames[0].address;

  for (const [name, mode] of [
    ['memleak.bcc.txt', 'default'],
    ['memleak.bcc-spaces.txt', 'default'],
    ['memleak.libbpf.txt', 'libbpf'],
  ] as const)
    it(`${name}: every report read, the last one's stacks equal the workload's counters`, () => {
      const text = readFileSync(join(EBPF, name), 'utf8');
      expect(looksLikeMemleak(text.slice(0, 4096))).toBe(true);
      const m = parseMemleak(text);
      expect(m.problems).toEqual([]);
      expect(m.mode).toBe(mode);
      expect(m.pid).toBe(31612);
      expect(m.reports).toHaveLength(10);
      expect(m.reports.every((r) => r.complete && r.stacks.length > 0)).toBe(true);
      const last = m.reports[m.reports.length - 1];
      expect(last.secondsOfDay).toBe(bt.reports.filter((r) => r.complete).pop()!.secondsOfDay);
      const by = (fn: string) => last.stacks.filter((s) => s.frames[0]?.symbol === fn);
      expect(sum(by('leak_step'))).toEqual(want.leak_step);
      expect(sum(by('keep_aligned'))).toEqual(want.keep_aligned);
      expect(by('leak_step')[0].frames[0]).toMatchObject({
        symbol: 'leak_step',
        offset: '0x13',
        module: 'leaky-ebpf',
        address: addressOf('leak_step'),
      });
    });

  it('the stacks without their header line: one report without a time, said so', () => {
    const text = readFileSync(join(EBPF, 'memleak.stacks-only.txt'), 'utf8');
    expect(looksLikeMemleak(text)).toBe(true);
    const m = parseMemleak(text);
    expect(m.reports).toHaveLength(1);
    expect(m.reports[0]).toMatchObject({ secondsOfDay: null, top: null, complete: true });
    expect(m.problems.map((p) => p.message)).toEqual([expect.stringMatching(/without a "\[HH:MM:SS\] Top N/)]);
    const leak = m.reports[0].stacks.filter((s) => s.frames[0].address === addressOf('leak_step'));
    expect(sum(leak)).toEqual(want.leak_step);
  });

  it("libbpf-tools' report cut before the stacks it announced is partial; a cut bcc report too", () => {
    const text = readFileSync(join(EBPF, 'memleak.libbpf.txt'), 'utf8');
    const lines = text.split('\n');
    const lastHeader = lines.map((l) => /Top \d+ stacks/.test(l)).lastIndexOf(true);
    // the last report's first stack and its frames, then the copy ends (at a line's end)
    const cut = lines.slice(0, lastHeader + 5).join('\n') + '\n';
    const m = parseMemleak(cut);
    expect(m.reports[9].complete).toBe(false);
    expect(m.reports.slice(0, 9).every((r) => r.complete)).toBe(true);
    expect(m.problems[0].message).toMatch(/announces \d+ stacks but has 1/);
    const spaces = readFileSync(join(EBPF, 'memleak.bcc-spaces.txt'), 'utf8');
    const cutBcc = parseMemleak(spaces.slice(0, spaces.lastIndexOf(' bytes in ') + 40));
    expect(cutBcc.reports[9].complete).toBe(false);
  });

  it('headers but no stack read is a warning naming the first line not understood, never a silent 0 B', () => {
    const m = parseMemleak(
      '[10:00:00] Top 10 stacks with outstanding allocations:\n--> 4096 bytes / 1 allocations (stack 7)\n' +
        '[10:00:05] Top 10 stacks with outstanding allocations:\n',
    );
    expect(m.reports.every((r) => r.stacks.length === 0)).toBe(true);
    expect(m.problems.map((p) => p.message)).toEqual([
      '2 report header(s) but no stack read: 1 line(s) not understood, the first at line 2',
    ]);
  });

  it("the kernel's allocators (no pid) and libbpf-tools' blazesym frames with their inlined entries", () => {
    const m = parseMemleak(
      [
        'Attaching to kernel allocators, Ctrl+C to quit.',
        '[9:5:3] Top 1 stacks with outstanding allocations:',
        '192 bytes in 1 allocations from stack',
        '\t0 [<ffffffff88267387>] kmem_cache_alloc_lru+0x267 [kernel]',
        '\t1 [<0000000000401136>] (2 entries)',
        '\t\tgrow@0x401120 /src/leaky.c:12',
        '\t\tmain@0x401100 /src/leaky.c:30',
        '\t2 [<0000000000401200>] <null sym>',
        '',
      ].join('\n'),
    );
    expect(m.kernel).toBe(true);
    expect(m.reports[0]).toMatchObject({ secondsOfDay: 9 * 3600 + 5 * 60 + 3, top: 1, complete: true });
    expect(m.reports[0].stacks[0].frames.map((f) => [f.symbol, f.address])).toEqual([
      ['kmem_cache_alloc_lru', '0xffffffff88267387'],
      ['grow', null],
      ['main', null],
      [null, '0x401200'],
    ]);
  });
});
