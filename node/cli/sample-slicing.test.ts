// --sample against jeprof, and --focus/--ignore/--hide/--show against `go tool pprof` on the same dump exported
// with our pprof export (pprof's own filter code as the reference). Real Python fixtures (prof_accum:true).
import { describe, expect, it } from 'vitest';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCaptured } from './run-captured.js';
import { listDumps, parentLastDump, PY_FIXTURES, VERSIONS } from '../../fixtures/python/fixture-helpers.js';
import { FIXTURES } from '../../tools/fixtures.js';

const cli = runCaptured;

/** jeprof-sample-totals.txt (by fixtures/python/jeprof-sample-totals.sh): "<set>/<dump> <type> Total: N unit". */
function jeprofSampleTotals(): Map<string, number> {
  const out = new Map<string, number>();
  for (const l of readFileSync(join(PY_FIXTURES, 'jeprof-sample-totals.txt'), 'utf8').split('\n')) {
    const m = /^(\S+) (\S+) Total: (\d+) (B|objects)$/.exec(l);
    if (m) out.set(`${m[1]} ${m[2]}`, Number(m[3]));
  }
  return out;
}

interface JStack {
  stackId: number;
  stackIds?: number[];
  value?: number;
  liveBytes: number;
  accumulatedBytes?: number;
  accumulatedObjects?: number;
  frames: { function?: string | null }[];
}
interface JTop {
  processes: { pid: number; total: number; shownTotal: number; sample: string }[];
  stacks: JStack[];
  warnings: { message: string }[];
}

describe('--sample', () => {
  const ref = jeprofSampleTotals();
  const dumps = VERSIONS.flatMap((v) => listDumps(v).map((d) => ({ v, d })));
  it.each(dumps.map(({ v, d }) => [`${v}/${d.name}`, v, d.name]))(
    '%s: every sample type totals jeprof --<type>',
    async (rel, v, name) => {
      const path = join(PY_FIXTURES, v, name);
      for (const t of ['inuse_space', 'inuse_objects', 'alloc_space', 'alloc_objects']) {
        const want = ref.get(`${rel} ${t}`);
        expect(want, `${rel} ${t} in jeprof-sample-totals.txt`).toBeDefined();
        const doc = JSON.parse(
          (await cli('top', path, '--json', '--no-symbols', '-n', '1', '--sample', t)).out,
        ) as JTop;
        expect(doc.processes[0].sample).toBe(t);
        expect(Math.abs(doc.processes[0].total - (want ?? NaN)), `${rel} ${t}`).toBeLessThanOrEqual(1);
      }
    },
  );

  it('aliases: space = inuse_space, objects = inuse_objects; JSON stacks carry the accumulated values', async () => {
    const path = join(PY_FIXTURES, 'py312', parentLastDump(listDumps('py312')).name);
    const a = JSON.parse(
      (await cli('top', path, '--json', '--no-symbols', '-n', '3', '--sample', 'objects')).out,
    ) as JTop;
    expect(a.processes[0].sample).toBe('inuse_objects');
    const s = JSON.parse(
      (await cli('top', path, '--json', '--no-symbols', '-n', '1000000', '--sample', 'alloc_space')).out,
    ) as JTop;
    expect(
      s.stacks.every((x) => typeof x.accumulatedBytes === 'number' && typeof x.accumulatedObjects === 'number'),
    ).toBe(true);
    expect(s.stacks.reduce((acc, x) => acc + (x.accumulatedBytes ?? 0), 0)).toBeCloseTo(s.processes[0].total, 3);
    // the allocate-and-free handler is only in the accumulated counts: it leads alloc_space, not inuse_space
    expect(s.stacks[0].frames[0].function).toBe('transient_handler');
  });

  it('without prof_accum: says so instead of showing zeros', async () => {
    const summary = JSON.parse((await cli('summary', `${FIXTURES}/job`, '--json')).out) as {
      processes: { pid: number; snapshots: { accumulatedBytes?: number }[] }[];
    };
    const noAccum = summary.processes.find((p) => p.snapshots.every((s) => s.accumulatedBytes === undefined));
    expect(noAccum, 'a fixture process dumped with prof_accum off').toBeDefined();
    const r = await cli(
      'top',
      `${FIXTURES}/job`,
      '--pid',
      String(noAccum?.pid),
      '--sample',
      'alloc_space',
      '--no-symbols',
    );
    expect(r.out).not.toMatch(/alloc_space/);
    expect(r.err).toMatch(/prof_accum was off/);
  });
});

let goChecked: string | null | undefined;
function goTool(): string | null {
  if (goChecked !== undefined) return goChecked;
  const r = spawnSync('go', ['version'], { encoding: 'utf8' });
  goChecked = r.status === 0 ? 'go' : null;
  if (goChecked === null)
    console.warn(
      'slicing tests: `go` not found; the `go tool pprof` comparisons are skipped (apt-get install golang-go)',
    );
  return goChecked;
}

/** `go tool pprof -raw` after pprof's filters: per sample, its four values and its number of locations. */
function pprofRaw(file: string, filter: string[]): { inuse: number; alloc: number; locations: number }[] {
  const text = execFileSync('go', ['tool', 'pprof', '-raw', '-symbolize=none', ...filter, file], {
    encoding: 'utf8',
    env: { ...process.env, PPROF_TMPDIR: tmpdir() },
  });
  const out: { inuse: number; alloc: number; locations: number }[] = [];
  for (const l of text.split('\n')) {
    const m = /^\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+):((?: \d+)*) ?$/.exec(l);
    if (m)
      out.push({
        alloc: Number(m[2]),
        inuse: Number(m[4]),
        locations: m[5].trim().split(/\s+/).filter(Boolean).length,
      });
  }
  return out;
}

describe('--focus/--ignore/--hide/--show equal go tool pprof -focus/-ignore/-hide/-show', () => {
  const d = parentLastDump(listDumps('py312'));
  const dump = join(PY_FIXTURES, 'py312', d.name);
  const cases: [string, string[]][] = [
    ['focus on a Python function', ['--focus', 'make_record']],
    ['focus on a module path', ['--focus', 'libc\\.so']],
    ['ignore a thread', ['--ignore', 'scanner']],
    ['focus and ignore', ['--focus', 'Pipeline', '--ignore', 'transient']],
    ['hide the interpreter', ['--hide', 'libpython']],
    ['show the workload', ['--show', 'workload\\.py']],
    ['focus with hide', ['--focus', 'recurse', '--hide', '^recurse$']],
  ];
  it.each(cases)('%s', async (_name, opts) => {
    if (!goTool()) {
      console.warn('skipped: `go` not found');
      return;
    }
    const dir = mkdtempSync(join(tmpdir(), 'heaplens-slice-'));
    const pb = join(dir, 'p.pb.gz');
    expect((await cli('export', '--format', 'pprof', '-o', pb, dump, '--stacks', 'merged', '--no-symbols')).code).toBe(
      0,
    );
    const pprofOpts = opts.map((o, i) => (i % 2 === 0 ? `-${o.slice(2)}=${opts[i + 1]}` : '')).filter(Boolean);
    const ref = pprofRaw(pb, pprofOpts);
    for (const sample of ['inuse_space', 'alloc_space']) {
      const doc = JSON.parse(
        (
          await cli(
            'top',
            dump,
            '--json',
            '--no-symbols',
            '--stacks',
            'merged',
            '-n',
            '1000000',
            '--sample',
            sample,
            ...opts,
          )
        ).out,
      ) as JTop;
      const ours = doc.processes[0].shownTotal;
      const theirs = ref.reduce((a, s) => a + (sample === 'inuse_space' ? s.inuse : s.alloc), 0);
      // pprof holds each stack's value rounded to an integer (roundPreservingSum): at most 1 apart per stack
      expect(Math.abs(ours - theirs), `${sample} ${opts.join(' ')}: ours ${ours}, pprof ${theirs}`).toBeLessThanOrEqual(
        ref.length,
      );
      expect(theirs).toBeGreaterThan(0);
      if (sample !== 'inuse_space') continue;
      // the same stacks, each with the same number of frames left
      const lengths = (xs: number[]) => xs.sort((a, b) => a - b).join(',');
      const oursLengths = doc.stacks.flatMap((s) => new Array<number>(s.stackIds?.length ?? 1).fill(s.frames.length));
      expect(lengths(oursLengths)).toBe(lengths(ref.map((s) => s.locations)));
    }
    // `export --focus …` writes the stacks pprof's own filter keeps, with the same frames
    const sliced = join(dir, 'sliced.pb.gz');
    expect(
      (await cli('export', '--format', 'pprof', '-o', sliced, dump, '--stacks', 'merged', '--no-symbols', ...opts))
        .code,
    ).toBe(0);
    const ours = pprofRaw(sliced, []);
    const sum = (xs: { inuse: number }[]) => xs.reduce((a, s) => a + s.inuse, 0);
    expect(Math.abs(sum(ours) - sum(ref))).toBeLessThanOrEqual(ref.length);
    // (after a hide or show, stacks that became the same are one sample when pprof reads the file: compare those
    // by total only)
    if (!opts.includes('--hide') && !opts.includes('--show'))
      expect(ours.map((s) => s.locations).sort((a, b) => a - b)).toEqual(
        ref.map((s) => s.locations).sort((a, b) => a - b),
      );
  });
});

describe('--granularity', () => {
  it("functions: the two leak loops (main at two lines) are one row with both rows' bytes; files: file names", async () => {
    const d = parentLastDump(listDumps('py312'));
    const dump = join(PY_FIXTURES, 'py312', d.name);
    type Row = { liveBytes: number; frames: { function?: string | null; line?: number | null }[] };
    const leakRows = (doc: { stacks: Row[] }) => doc.stacks.filter((s) => s.frames[0]?.function === 'make_record');
    const lines = leakRows(JSON.parse((await cli('top', dump, '--json', '--no-symbols', '-n', '1000000')).out));
    const mains = new Set(lines.map((s) => `${s.frames[3]?.function}:${s.frames[3]?.line}`));
    expect(mains.size).toBe(2); // main-step and main-step-2 (the workload's two loops)
    const fns = leakRows(
      JSON.parse((await cli('top', dump, '--json', '--no-symbols', '-n', '1000000', '--granularity', 'functions')).out),
    );
    expect(fns.length).toBeLessThan(lines.length);
    expect(fns.reduce((a, s) => a + s.liveBytes, 0)).toBeCloseTo(
      lines.reduce((a, s) => a + s.liveBytes, 0),
      3,
    );
    const text = await cli('top', dump, '--no-symbols', '-n', '3', '--granularity', 'files');
    expect(text.out).toMatch(/\d\s{2}workload\.py ← libc\.so\.6/); // a file's frames in a row are one
    expect(text.out).not.toMatch(/workload\.py:\d/);
  });
});
