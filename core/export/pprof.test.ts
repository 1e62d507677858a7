// pprof export: `go tool pprof` (an independent reader of profile.proto) reads our file, and its totals equal
// ours and jeprof's. Skipped with a message when `go` is missing (CI installs golang-go).
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Profile } from 'pprof-format';
import { loadJob } from '../load/load-job.js';
import { fixtureFiles, fixturePath, jeprofTotals, pprofRawSums } from '../../tools/fixtures.js';
import { NodeSymbolFileSource, readAddr2lineWasm } from '../../node/io/symbol-files.js';
import { Symbolizer } from '../symbolize/symbolize.js';
import { compileAddr2line } from '../symbolize/wasm-addr2line.js';
import { collectInputFiles } from '../../node/io/node-files.js';
import { DEFAULT_VIEW, viewSource } from '../frames/view.js';
import { toPprof } from './pprof.js';

let goChecked: string | null | undefined;

/** Path of `go`, or null (tests using it are skipped with a message naming the package). */
function goBinary(): string | null {
  if (goChecked !== undefined) return goChecked;
  const r = spawnSync('go', ['version'], { encoding: 'utf8' });
  goChecked = r.status === 0 ? 'go' : null;
  if (goChecked === null)
    console.warn('export tests: `go` not found; the `go tool pprof` checks are skipped (apt-get install golang-go)');
  return goChecked;
}

/** `go tool pprof -top` of a profile file; returns stdout. */
function pprofTop(file: string, extra: readonly string[] = []): string {
  return execFileSync('go', ['tool', 'pprof', '-top', '-symbolize=none', ...extra, file], {
    encoding: 'utf8',
    env: { ...process.env, PPROF_TMPDIR: process.env.TMPDIR ?? '/tmp', HOME: process.env.HOME ?? '/tmp' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** "Showing nodes accounting for …, …% of <N><unit> total" → N. */
function pprofTotal(top: string): number {
  const m = /of (-?\d+)(?:B)? total/.exec(top);
  if (!m) throw new Error(`no total in go tool pprof output:\n${top}`);
  return Number(m[1]);
}

/** The rows of -top: flat, cum and name. */
function pprofRows(top: string): { flat: number; cum: number; name: string }[] {
  const out: { flat: number; cum: number; name: string }[] = [];
  const lines = top.split('\n');
  const h = lines.findIndex((l) => /^\s*flat\s+flat%/.test(l));
  for (const l of lines.slice(h + 1)) {
    const m = /^\s*(-?\d+)B?\s+\S+\s+\S+\s+(-?\d+)B?\s+\S+\s+(.*)$/.exec(l);
    if (m) out.push({ flat: Number(m[1]), cum: Number(m[2]), name: m[3] });
  }
  return out;
}

const dir = mkdtempSync(join(tmpdir(), 'heaplens-pprof-'));
const hasGo = goBinary() !== null;

describe('pprof export', () => {
  it('decodes with pprof-format: sample types, one value pair per sample, sums equal the rounded totals', async () => {
    const job = await loadJob(fixtureFiles('job'));
    for (const p of job.processes) {
      const si = p.snapshots.length - 1;
      const prof = Profile.decode(toPprof([{ proc: p, snapshotIndex: si, frames: viewSource(p, DEFAULT_VIEW) }]));
      const st = prof.stringTable.strings;
      const snap = p.snapshots[si];
      const types = prof.sampleType.map((t) => `${st[Number(t.type)]}/${st[Number(t.unit)]}`);
      // Go's heap profile order: alloc_* (when prof_accum recorded them), then inuse_*
      expect(types).toEqual([
        ...(snap.hasAccumulated ? ['alloc_objects/count', 'alloc_space/bytes'] : []),
        'inuse_objects/count',
        'inuse_space/bytes',
      ]);
      expect(st[Number(prof.defaultSampleType)]).toBe('inuse_space');
      const sum = (type: string) => prof.sample.reduce((a, s) => a + Number(s.value[types.indexOf(type)]), 0);
      expect(sum('inuse_space/bytes')).toBe(Math.round(snap.live.bytes));
      expect(sum('inuse_objects/count')).toBe(Math.round(snap.live.objects));
      if (snap.hasAccumulated && snap.accumBytes && snap.accumObjects) {
        expect(sum('alloc_space/bytes')).toBe(Math.round(snap.accumBytes.reduce((a, v) => a + v, 0)));
        expect(sum('alloc_objects/count')).toBe(Math.round(snap.accumObjects.reduce((a, v) => a + v, 0)));
      }
    }
  });

  it.skipIf(!hasGo)(
    "go tool pprof -top reads every fixture dump; its total equals ours and jeprof's (bytes and objects)",
    async () => {
      const ref = jeprofTotals();
      const job = await loadJob(fixtureFiles('job'));
      let compared = 0;
      for (const p of job.processes) {
        // first, a middle and the last snapshot of each process
        for (const si of [0, p.snapshots.length >> 1, p.snapshots.length - 1]) {
          const s = p.snapshots[si];
          const file = join(dir, `${p.prefix}-${si}.pb.gz`);
          writeFileSync(file, toPprof([{ proc: p, snapshotIndex: si, frames: viewSource(p, DEFAULT_VIEW) }]));
          const bytes = pprofTotal(pprofTop(file, ['-unit=B', '-sample_index=inuse_space']));
          const objects = pprofTotal(pprofTop(file, ['-sample_index=inuse_objects']));
          const r = ref.get(s.file);
          expect(r, s.file).toBeDefined();
          expect(bytes, s.file).toBe(Math.round(s.live.bytes));
          expect(objects, s.file).toBe(Math.round(s.live.objects));
          // jeprof prints whole bytes of the same unbiased sum
          expect(Math.abs(bytes - r!.inuseSpace), s.file).toBeLessThanOrEqual(1);
          expect(Math.abs(objects - r!.inuseObjects), s.file).toBeLessThanOrEqual(1);
          compared++;
        }
      }
      expect(compared).toBe(9);
    },
  );

  it.skipIf(!hasGo)(
    'several processes in one profile: go tool pprof totals the sum, -tagfocus selects one',
    async () => {
      const ref = jeprofTotals();
      const job = await loadJob(fixtureFiles('job'));
      const inputs = job.processes.map((p) => ({
        proc: p,
        snapshotIndex: p.snapshots.length - 1,
        frames: viewSource(p, DEFAULT_VIEW),
      }));
      const file = join(dir, 'all.pb.gz');
      writeFileSync(file, toPprof(inputs));
      const sum = job.processes.reduce((a, p) => a + ref.get(p.snapshots[p.snapshots.length - 1].file)!.inuseSpace, 0);
      const total = pprofTotal(pprofTop(file, ['-unit=B']));
      expect(Math.abs(total - sum)).toBeLessThanOrEqual(job.processes.length);
      const sampled = job.processes.find((p) => p.prefix === 'sampled')!;
      const one = pprofTotal(pprofTop(file, ['-unit=B', `-tagfocus=pid=${sampled.pid}`]));
      // -tagfocus keeps matching samples; the "total" stays the whole profile, the shown nodes are the process
      const shown = /accounting for (\d+)B/.exec(pprofTop(file, ['-unit=B', `-tagfocus=pid=${sampled.pid}`]))![1];
      expect(one).toBe(total);
      expect(Number(shown)).toBe(Math.round(sampled.snapshots[sampled.snapshots.length - 1].live.bytes));
    },
  );

  it.skipIf(!hasGo)(
    'symbolized frames: go tool pprof shows leak_steady with the known leak (3 × 16,384 B per dump) and file:line',
    async () => {
      const job = await loadJob(fixtureFiles('job'));
      const exact = job.processes.find((p) => p.prefix === 'exact')!;
      const wasm = await compileAddr2line(await readAddr2lineWasm());
      const sym = new Symbolizer(new NodeSymbolFileSource(), {
        wasm,
        symbolDirs: [fixturePath('bin')],
        hostPaths: false,
      });
      exact.symbols = await sym.symbolizeProcess(exact);
      await sym.dispose();
      // the 20th manual dump (m19): leak_steady holds 20 × 3 × 16,384 B (the known pattern, fixtures/jemalloc/src/leaky.c)
      const si = exact.snapshots.findIndex((s) => s.trigger === 'manual' && s.triggerSeq === 19);
      expect(si).toBeGreaterThanOrEqual(0);
      const file = join(dir, 'exact-sym.pb.gz');
      writeFileSync(file, toPprof([{ proc: exact, snapshotIndex: si, frames: viewSource(exact, DEFAULT_VIEW) }]));
      const top = pprofTop(file, ['-unit=B']);
      const rows = pprofRows(top);
      const leak = rows.find((r) => r.name === 'leak_steady');
      expect(leak, top).toBeDefined();
      expect(leak!.cum).toBe(20 * 3 * 16384);
      expect(rows.find((r) => r.name === 'make_node')?.flat).toBeGreaterThan(0);
      // -lines: file:line from our Line records
      const src = readFileSync(fixturePath('src/leaky.c'), 'utf8').split('\n');
      const line = src.findIndex((l) => l.includes('leaked[step] = make_node')) + 1;
      expect(pprofTop(file, ['-unit=B', '-lines'])).toContain(`leak_steady leaky.c:${line}`);
    },
  );

  it.skipIf(!hasGo)(
    "Python frames (PYFRAMES/1) are functions with file:line; the total equals jeprof's on the real py312 dump",
    async () => {
      const py = join(fixturePath('..'), 'python');
      // the parent's last dump (the pid that also wrote an m0 dump), found by pattern: pids change with each regeneration
      const names = readdirSync(join(py, 'py312'));
      const pid = /^jeprof\.(\d+)\.0\.m0\.heap$/.exec(names.find((n) => /^jeprof\.\d+\.0\.m0\.heap$/.test(n))!)![1];
      const dump = `jeprof.${pid}.1.m1.heap`;
      const files = await collectInputFiles([join(py, 'py312', dump), join(py, 'py312', dump + '.pyframes')]);
      const job = await loadJob(files);
      const p = job.processes[0];
      expect(p.pythonFrames).toBeTruthy();
      const file = join(dir, 'py312.pb.gz');
      writeFileSync(file, toPprof([{ proc: p, snapshotIndex: 0, frames: viewSource(p, DEFAULT_VIEW) }]));
      const want = Number(
        new RegExp(`py312/jeprof\\.${pid}\\.1\\.m1\\.heap \\S+ Total: (\\d+) B`).exec(
          readFileSync(join(py, 'jeprof-totals.txt'), 'utf8'),
        )![1],
      );
      expect(Math.abs(pprofTotal(pprofTop(file, ['-unit=B'])) - want)).toBeLessThanOrEqual(1);
      // the steady leak's allocation line, found in workload.py by its tag
      const src = readFileSync(join(py, 'workload', 'workload.py'), 'utf8').split('\n');
      const line = src.findIndex((l) => l.includes('# @leak-alloc')) + 1;
      const lines = pprofRows(pprofTop(file, ['-unit=B', '-lines']));
      const rec = lines.find((r) => r.name.startsWith('make_record ') && r.name.endsWith(`workload.py:${line}`));
      expect(rec, lines.map((r) => r.name).join('\n')).toBeDefined();
      expect(rec!.cum).toBeGreaterThan(0);
      // -top counts the leaf as flat: the leak's Python line, not the interpreter's marker below it (issue 45 item 5)
      const byFn = pprofRows(pprofTop(file, ['-unit=B']));
      expect(byFn[0].name).toBe('make_record');
      expect(byFn.find((r) => r.name === '[interpreter frames]')?.flat ?? 0).toBeLessThan(byFn[0].flat / 10);
      expect(lines[0]).toEqual({ ...rec, flat: rec!.cum });
      // module-level code is a function too: `<module>` with its file and line
      const mod = lines.filter((r) => /^<module> \S*\/workload\.py:\d+$/.test(r.name));
      expect(mod.length, lines.map((r) => r.name).join('\n')).toBeGreaterThan(0);
      expect(byFn.find((r) => r.name === '<module>')!.cum).toBeGreaterThan(rec!.cum);
    },
  );

  it.skipIf(!hasGo)(
    "a Go delta profile's export keeps its negative values: go tool pprof reads the same sums",
    async () => {
      const delta = join(fixturePath('..'), 'go', 'delta');
      const b = new Uint8Array(readFileSync(join(delta, 'heap-delta.pb.gz')));
      const job = await loadJob([
        { path: 'heap-delta.pb.gz', size: b.length, mtimeMs: null, read: async (o, l) => b.subarray(o, o + l) },
      ]);
      const p = job.processes[0];
      const file = join(dir, 'delta-export.pb.gz');
      writeFileSync(file, toPprof([{ proc: p, snapshotIndex: 0, frames: viewSource(p, DEFAULT_VIEW) }]));
      const ours = execFileSync('go', ['tool', 'pprof', '-raw', '-symbolize=none', file], {
        encoding: 'utf8',
        env: { ...process.env, HOME: process.env.HOME ?? '/tmp' },
      });
      // -raw's sample values summed per type
      const want = pprofRawSums(readFileSync(join(delta, 'heap-delta.pprof-raw.txt'), 'utf8'));
      expect(want.inuse_space).toBeLessThan(0);
      expect(pprofRawSums(ours)).toEqual(want);
    },
  );
});
