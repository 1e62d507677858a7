// A count sample (pprof's alloc_objects / inuse_objects, chosen with --sample or a profile's only values) prints as
// counts in growth and postmortem, never as bytes (7,014 objects once read "6.85 KiB"). Expected figures: `go tool
// pprof -sample_index=alloc_objects -top` of the same file (allocs.pprof-top.alloc_objects.txt, go1.19) and the
// profiles' `go tool pprof -raw` sums (tools/fixtures.ts pprofRawSums).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { FIXTURES, pprofRawSums } from '../../tools/fixtures.js';
import { runCaptured, runJson } from './run-captured.js';

const GO = join(FIXTURES, '..', 'go');
const ALLOCS = join(GO, 'allocs', 'allocs.pb.gz');
const LEAK = join(GO, 'leak-series');
const OOM = join(FIXTURES, '..', 'oom-job');
const rawSums = (file: string) => pprofRawSums(readFileSync(file, 'utf8'));

/** go tool pprof -top: the total and each function's flat count */
const pprofTop = readFileSync(join(GO, 'allocs', 'allocs.pprof-top.alloc_objects.txt'), 'utf8');
const pprofTotal = Number(/ of (\d+) total$/m.exec(pprofTop)![1]);
const pprofFlat = (fn: string): number =>
  Number(new RegExp(`^\\s+(\\d+)\\s.*\\s${fn.replace(/[.*()]/g, '\\$&')}$`, 'm').exec(pprofTop)![1]);
const grouped = (n: number): string => n.toString().replace(/\B(?=(\d{3})+(?!\d))/g, ',');

/** a figure printed in bytes: "6.85 KiB", "0 B", "+1.2 MiB/s" */
const BYTES = /\d (?:B|KiB|MiB|GiB)\b/;

/** the lines of a text table under the header that starts with `head`, up to the first blank line */
function tableAfter(text: string, head: RegExp): string[] {
  const lines = text.split('\n');
  const at = lines.findIndex((l) => head.test(l));
  expect(at, `no line ${head} in:\n${text}`).toBeGreaterThanOrEqual(0);
  const end = lines.findIndex((l, i) => i > at && l.trim() === '');
  return lines.slice(at, end < 0 ? undefined : end);
}

interface ListingJson {
  sample: string;
  unit: string;
  processes: { lastCompleteBytes?: number; projection?: unknown; memory?: { outsideHeapBytes: number | null } }[];
  stacks: { lastBytes: number; frames: { function?: string }[] }[];
  groups: { lastBytes: number; frames: { function?: string }[] }[];
}

describe('a count sample prints as counts', () => {
  it('go tool pprof agrees with the raw sums it is checked against', () => {
    expect(pprofTop).toMatch(/^Type: alloc_objects$/m);
    expect(pprofTotal).toBe(rawSums(join(GO, 'allocs', 'allocs.pprof-raw.txt')).alloc_objects);
  });

  it('postmortem --sample alloc_objects: the last snapshot and the suspects in objects', async () => {
    const r = await runCaptured('postmortem', ALLOCS, '--sample', 'alloc_objects');
    expect(r.code).toBe(0);
    expect(r.out).toMatch(
      new RegExp(
        `^ {2}last complete snapshot: seq - \\(.*allocs\\.pb\\.gz\\): ${grouped(pprofTotal)} alloc_objects$`,
        'm',
      ),
    );
    const table = tableAfter(r.out, /^\s+#\s+pattern\s+late rate\s+alloc_objects\s/);
    expect(table.join('\n')).not.toMatch(BYTES);
    // main.leakStep and main.churn allocate at one stack each: their rows are pprof's flat counts
    for (const fn of ['main.leakStep', 'main.churn'])
      expect(table.find((l) => l.includes(`${fn} (`))).toMatch(new RegExp(`\\s${grouped(pprofFlat(fn))}\\s`));
    const doc = await runJson<ListingJson>('postmortem', ALLOCS, '--no-symbols', '--json', '--sample', 'alloc_objects');
    expect([doc.sample, doc.unit]).toEqual(['alloc_objects', 'objects']);
    expect(doc.processes[0].lastCompleteBytes).toBe(pprofTotal);
  });

  it('a profile whose only values are counts: postmortem and growth in objects without --sample', async () => {
    const only = join(GO, 'allocs', 'alloc-objects-only.pb.gz');
    const total = rawSums(join(GO, 'allocs', 'alloc-objects-only.pprof-raw.txt')).alloc_objects;
    const pm = await runCaptured('postmortem', only);
    expect(pm.out).toMatch(new RegExp(`: ${grouped(total)} alloc_objects$`, 'm'));
    const g = await runCaptured('growth', only, '-n', '3');
    expect(g.out).toMatch(/^\s+#\s+score \(alloc_objects\)\s+pattern/m);
    expect(g.out).not.toMatch(BYTES);
    const doc = await runJson<ListingJson>('growth', only, '--json');
    expect([doc.sample, doc.unit]).toEqual(['alloc_objects', 'objects']);
    // summary: its count in the sample's column; live bytes and objects it does not record are "-", not "0 B"
    const sm = await runCaptured('summary', only);
    const [head, row] = tableAfter(sm.out, /^\s+seq\s+trigger\s/);
    expect(head).toMatch(/\slive\s+objects\s+alloc_objects\s/);
    expect(row).toMatch(new RegExp(`\\s-\\s+-\\s+${grouped(total)}\\s`));
  });

  it('growth --sample alloc_objects: scores, Δ and σ as counts, the score column titled by the sample', async () => {
    const g = await runCaptured('growth', ALLOCS, '--sample', 'alloc_objects', '-n', '3');
    expect(g.code).toBe(0);
    expect(g.out).toMatch(/^\s+#\s+score \(alloc_objects\)\s+pattern\s+Δ \(its holders\)/m);
    expect(g.out).not.toMatch(BYTES);
    const doc = await runJson<ListingJson>('growth', ALLOCS, '--json', '--sample', 'alloc_objects', '-n', '200');
    const leak = doc.stacks.filter((s) => s.frames.some((f) => f.function === 'main.leakStep'));
    expect(leak.reduce((a, s) => a + s.lastBytes, 0)).toBe(pprofFlat('main.leakStep'));
  });

  it('postmortem --sample inuse_objects of a series: ends, rates and the verdict as counts', async () => {
    const r = await runCaptured('postmortem', LEAK, '--sample', 'inuse_objects');
    expect(r.code).toBe(0);
    // each process's last complete snapshot: the inuse_objects of its last profile (go tool pprof -raw)
    for (const [pid, last] of [
      ['6287', '005'],
      ['6288', '004'],
    ]) {
      const n = rawSums(join(LEAK, `leaky-${pid}-${last}.pprof-raw.txt`)).inuse_objects;
      expect(r.out).toMatch(new RegExp(`leaky-${pid}-${last}\\.pb\\.gz\\): ${grouped(n)} inuse_objects$`, 'm'));
    }
    expect(r.out).toMatch(/growth at the end \(.*\): \+\d+\/dump \[.*\], \+\d+\/s \[.*\]\s+inuse_objects$/m);
    // the verdict's growth: objects a second, not MiB
    expect(r.out.split('\n\n')[0]).toMatch(/main\.leakStep \(main\.go:24\) .*\+\d+ objects\/s, steady/s);
    expect(r.out.split('\n\n')[0]).not.toMatch(/MiB/);
    const table = tableAfter(r.out, /^\s+#\s+pattern\s+late rate\s+inuse_objects\s/);
    expect(table.join('\n')).not.toMatch(BYTES);
  });

  it('postmortem of a killed job with a count sample: no time to the byte limit, nothing set against RSS', async () => {
    const r = await runCaptured('postmortem', OOM, '--no-symbols', '--sample', 'inuse_objects');
    expect(r.code).toBe(0);
    // the kill's figures are bytes and stay so; the heap's are counts and are not subtracted from the RSS
    expect(r.out).toMatch(/^The kernel OOM-killed .* 320 MiB limit\./m);
    expect(r.out).toMatch(/^ {2}memory: RSS [\d.]+ MiB, heap [\d,]+ inuse_objects/m);
    expect(r.out).not.toMatch(/outside the heap|copy-on-write/);
    expect(r.out).toMatch(/^limit 320 MiB \(from .*\): the values are inuse_objects, a count of objects, not bytes/m);
    expect(r.out).not.toMatch(/last complete snapshot: .*\d (?:B|KiB|MiB)/);
    const doc = await runJson<ListingJson>('postmortem', OOM, '--no-symbols', '--json', '--sample', 'inuse_objects');
    expect([doc.sample, doc.unit]).toEqual(['inuse_objects', 'objects']);
    expect(doc.processes.every((p) => p.projection === null && p.memory?.outsideHeapBytes === null)).toBe(true);
  });

  // jemalloc's model (PROFILING_INTERNALS.md): a record of c sampled objects of b bytes was sampled with
  // p = 1 − e^(−(b/c)/R); its unbiased count Ô = c/p has variance Ô²(1 − p)/c. Records add.
  it("inuse_objects' σ is the count's, from the dump's records, not the bytes'", async () => {
    const dump = gunzipSync(readFileSync(join(OOM, 'dumps', 'job.28513.42.i42.heap.gz'))).toString('utf8');
    const lines = dump.split('\n');
    const period = Number(/^heap_v2\/(\d+)$/.exec(lines[0])![1]);
    let count = 0;
    let variance = 0;
    for (const [i, l] of lines.entries()) {
      const m = /^\s+t\*: (\d+): (\d+)/.exec(l);
      if (!m || !lines[i - 1]?.startsWith('@') || Number(m[1]) === 0) continue;
      const [c, b] = [Number(m[1]), Number(m[2])];
      const p = -Math.expm1(-b / c / period);
      count += c / p;
      variance += ((c / p) ** 2 * (1 - p)) / c;
    }
    const doc = await runJson<{
      processes: { pid: number; lastCompleteBytes: number; lastCompleteSigmaBytes: number }[];
    }>('postmortem', OOM, '--no-symbols', '--json', '--sample', 'inuse_objects');
    const p = doc.processes.find((x) => x.pid === 28513)!;
    expect(p.lastCompleteBytes).toBeCloseTo(count, 3);
    expect(p.lastCompleteSigmaBytes).toBeCloseTo(Math.sqrt(variance), 3);
  });

  it('live bytes keep their units and say so in the JSON', async () => {
    const doc = await runJson<ListingJson>('growth', LEAK, '--no-symbols', '--json');
    expect([doc.sample, doc.unit]).toEqual(['inuse_space', 'bytes']);
    const r = await runCaptured('postmortem', LEAK, '--no-symbols');
    expect(r.out).toMatch(/^\s+#\s+pattern\s+late rate\s+live at end\s/m);
    expect(r.out).toMatch(/last complete snapshot: .*: [\d.]+ (?:B|KiB|MiB)$/m);
  });
});
