// `heaplens report` and `heaplens export` end to end on the fixture job: files written, read back, checked against
// jeprof's totals and go tool pprof.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { Profile } from 'pprof-format';
import { runCaptured } from './run-captured.js';
import { FIXTURES, jeprofTotals, jobProcess } from '../../tools/fixtures.js';

const [EXACT, PYGROW] = ['exact', 'pygrow'].map(jobProcess);
import { parseFolded } from '../../core/export/folded.js';
import { reopenReport } from '../../core/report/reopen.js';
import { findReportApp } from './commands/report.js';
import { emptySession } from '../../core/notes/schema.js';
import { addNote, createNote } from '../../core/notes/notes.js';
import { serializeSession } from '../../core/notes/validate.js';
import { answer } from '../../core/engine/answer.js';
import type { Query } from '../../core/engine/api.js';
import { QuerySession } from '../../core/query/session.js';
import { openJob } from '../engine/open-job.js';
import { loadSessionFile } from '../io/session-file.js';
import { loadDumps } from './load-dumps.js';

const cli = runCaptured;

const job = `${FIXTURES}/job`;
const dir = mkdtempSync(join(tmpdir(), 'heaplens-cli-report-'));
const ROOT = resolve(import.meta.dirname, '..', '..');

beforeAll(() => {
  // `npm run build` makes the report page (postbuild); build it here when the tests run on their own
  if (!findReportApp())
    execFileSync(
      process.execPath,
      [join(ROOT, 'node_modules/vite/bin/vite.js'), 'build', '-c', 'vite.report.config.ts'],
      { cwd: ROOT, stdio: 'ignore' },
    );
}, 120_000);

describe('heaplens export', () => {
  it("folded to stdout: per process sums equal jeprof's totals of the last dumps", async () => {
    const r = await cli('export', '--format', 'folded', '-o', '-', job, '--no-symbols');
    expect(r.code).toBe(0);
    const lines = parseFolded(r.out + '\n');
    const ref = jeprofTotals();
    const lastOf = (prefix: string): number => {
      const files = [...ref.keys()].filter((k) => k.startsWith(`job/${prefix}.`));
      const last = files.sort((a, b) => Number(a.split('.')[2]) - Number(b.split('.')[2])).at(-1)!;
      return ref.get(last)!.inuseSpace;
    };
    for (const prefix of ['exact', 'sampled', 'pygrow']) {
      const sum = lines.filter((l) => l.stack[0].startsWith(prefix + ' ')).reduce((a, l) => a + l.weight, 0);
      expect(Math.abs(sum - lastOf(prefix))).toBeLessThanOrEqual(1);
    }
  });

  it('pprof file (gzipped) for one snapshot; go tool pprof reads it when present', async () => {
    const out = join(dir, 'exact.pb.gz');
    const r = await cli(
      'export',
      '--format',
      'pprof',
      '--snapshot',
      '0',
      '--pid',
      EXACT.split('.')[1],
      '-o',
      out,
      job,
      '--no-symbols',
    );
    expect(r.code).toBe(0);
    const prof = Profile.decode(gunzipSync(readFileSync(out)));
    const st = prof.stringTable.strings;
    const inuse = prof.sampleType.findIndex((t) => st[Number(t.type)] === 'inuse_space');
    const total = prof.sample.reduce((a, s) => a + Number(s.value[inuse]), 0);
    const want = jeprofTotals().get(`job/${EXACT}.0.m0.heap`)!.inuseSpace;
    expect(total).toBe(want);
    if (spawnSync('go', ['version']).status !== 0) {
      console.warn('report-command.test: go tool pprof check skipped: `go` not found (apt-get install golang-go)');
      return;
    }
    const top = execFileSync('go', ['tool', 'pprof', '-top', '-unit=B', '-symbolize=none', out], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    expect(top).toContain(`of ${want}B total`);
  });

  it('speedscope file: one profile per process', async () => {
    const out = join(dir, 'all.speedscope.json');
    expect((await cli('export', '--format', 'speedscope', '-o', out, job, '--no-symbols')).code).toBe(0);
    const doc = JSON.parse(readFileSync(out, 'utf8'));
    expect(doc.$schema).toBe('https://www.speedscope.app/file-format-schema.json');
    expect(doc.profiles).toHaveLength(3);
    // speedscope's file format (src/lib/file-format-spec.ts): sampled profiles whose samples index shared.frames,
    // one weight per sample, in bytes; each process's weights sum to jeprof's total of its last dump
    const ref = jeprofTotals();
    const frames = doc.shared.frames as { name: string }[];
    expect(frames.length).toBeGreaterThan(3);
    for (const f of frames) expect(typeof f.name).toBe('string');
    for (const prof of doc.profiles as {
      type: string;
      name: string;
      unit: string;
      samples: number[][];
      weights: number[];
      startValue: number;
      endValue: number;
    }[]) {
      expect(prof.type).toBe('sampled');
      expect(prof.unit).toBe('bytes');
      expect(prof.samples.length).toBe(prof.weights.length);
      for (const st of prof.samples) for (const i of st) expect(i >= 0 && i < frames.length).toBe(true);
      const sum = prof.weights.reduce((a, w) => a + w, 0);
      expect(prof.endValue - prof.startValue).toBe(sum);
      const prefix = ['exact', 'sampled', 'pygrow'].find((x) => prof.name.includes(x));
      expect(prefix, prof.name).toBeDefined();
      const files = [...ref.keys()].filter((k) => k.startsWith(`job/${prefix}.`));
      const last = files.sort((a, b) => Number(a.split('.')[2]) - Number(b.split('.')[2])).at(-1)!;
      expect(Math.abs(sum - ref.get(last)!.inuseSpace), prof.name).toBeLessThanOrEqual(1);
    }
  });

  it('usage errors exit 2', async () => {
    expect((await cli('export', job, '-o', join(dir, 'x'))).code).toBe(2);
    expect((await cli('export', '--format', 'svg', job, '-o', join(dir, 'x'))).code).toBe(2);
    expect((await cli('export', '--format', 'pprof', job)).code).toBe(2);
    expect((await cli('export', '--format', 'pprof', '-o', '-', job)).code).toBe(2);
    expect((await cli('report', job)).code).toBe(2);
    expect((await cli('report', job, '-o', join(dir, 'r.html'), '--snapshot', '1')).code).toBe(2);
  });
});

describe('heaplens report', () => {
  it("writes a report with the session's notes and --base/--target; reopening gives them back", async () => {
    const sessionPath = join(dir, 's.json');
    const s = addNote(
      emptySession('t'),
      createNote(
        { kind: 'frame', process: null, function: 'make_node' },
        'every node',
        '#2a9d8f',
        new Date('2026-11-29T10:00:00Z'),
      ),
    );
    writeFileSync(sessionPath, serializeSession(s));
    const out = join(dir, 'r.html');
    const r = await cli(
      'report',
      job,
      '-o',
      out,
      '--session',
      sessionPath,
      '--base',
      '3',
      '--target',
      '20',
      '--no-symbols',
      '--title',
      'fixture job',
    );
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/^wrote .*r\.html \(.*\): 3 processes, \d+ stacks, 1 notes$/);
    const back = reopenReport(readFileSync(out, 'utf8'));
    expect(back.session.notes).toEqual(s.notes);
    expect(back.session.readOnly).toBe(true);
    expect(back.header.title).toBe('fixture job');
    const exact = back.header.processes.find((p) => p.prefix === 'exact')!;
    expect(exact.snapshots[exact.base].seq).toBe(3);
    expect(exact.snapshots[exact.target].seq).toBe(20);
    const pygrow = back.header.processes.find((p) => p.prefix === 'pygrow')!;
    expect(pygrow.target).toBe(pygrow.snapshots.length - 1);
    // a process without those sequence numbers falls back to first → last, with a warning
    expect(r.err).toMatch(
      new RegExp(`${PYGROW.replace('.', '\\.')}: no snapshot with sequence number 20; the report compares to the last`),
    );
  });

  it('--sanitize prints what it removes and the report holds no directory', async () => {
    const out = join(dir, 'clean.html');
    const r = await cli('report', job, '-o', out, '--sanitize', '--no-symbols');
    expect(r.code).toBe(0);
    expect(r.err).toContain(`job/${EXACT} → ${EXACT}`);
    expect(r.err).toMatch(new RegExp(`maps of ${EXACT.replace('.', '\\.')}: \\d+ mappings left out`));
    const d = reopenReport(readFileSync(out, 'utf8')).header;
    expect(d.sanitized).toEqual({ paths: true, maps: true });
    expect(JSON.stringify(d)).not.toContain('job/');
    expect(d.processes.every((p) => (p.maps ?? []).every((m) => !m.path.includes('/')))).toBe(true);
  });

  it('a session from a newer heaplens is refused clearly (exit 1)', async () => {
    const p = join(dir, 'newer.json');
    writeFileSync(p, JSON.stringify({ format: 'heaplens-session', schema: 99, savedAt: '2026-11-29T10:00:00Z' }));
    const r = await cli('report', job, '-o', join(dir, 'n.html'), '--session', p, '--no-symbols');
    expect(r.code).toBe(1);
    expect(r.err).toContain('written by a newer heaplens (schema 99); this one reads up to 1');
    expect(existsSync(join(dir, 'n.html'))).toBe(false);
  });
});

describe('heaplens report: titled by the verdict', () => {
  it("the watchdog job's report is titled by who was killed and the leak's file:line, in <title> and the header", async () => {
    const wd = resolve(ROOT, 'fixtures', 'watchdog-job');
    // the victim's role from the workload's record, the leak's line from its tagged source line
    const role = (JSON.parse(readFileSync(join(wd, 'expected.json'), 'utf8')) as { kill: { role: string } }).kill.role;
    const line =
      readFileSync(resolve(ROOT, 'fixtures', 'launcher', 'launch.py'), 'utf8')
        .split('\n')
        .findIndex((l) => l.includes('# @leak-alloc')) + 1;
    const out = join(dir, 'watchdog.html');
    const r = await cli('report', join(wd, 'dumps'), join(wd, 'logs'), '-o', out, '--no-symbols');
    expect(r.code, r.err).toBe(0);
    const html = readFileSync(out, 'utf8');
    const title = `${role} killed: leak in launch.py:${line}`;
    expect(html).toContain(`<title>${title}</title>`);
    expect(reopenReport(html).header.title).toBe(title);
  });
});

describe("heaplens report: the engine's answer", () => {
  afterEach(() => vi.useRealTimers());

  /** The engine's 'report' answer over the job the paths open, asked as the CLI's options say (core/engine/answer.ts). */
  async function engineReport(paths: string[], req: Partial<Extract<Query, { type: 'report' }>>): Promise<string> {
    const { job } = await openJob(paths, { symbols: null, loadDumps: (files) => loadDumps(files) });
    const s = new QuerySession();
    s.attach(job!);
    const app = findReportApp()!;
    const { res } = await answer(
      s,
      {
        type: 'report',
        procs: job!.processes.map((_, i) => i),
        session: null,
        title: '',
        generator: 'heaplens 0.1.0',
        topN: 50,
        symbolized: false,
        sanitize: {},
        view: { mode: 'python-first', hideAllocator: true },
        previewOnly: false,
        ...req,
      },
      { reportApp: { js: readFileSync(app.js, 'utf8'), css: readFileSync(app.css, 'utf8') } },
    );
    if (res.type !== 'report' || res.html === null) throw new Error(`answered ${res.type}`);
    return res.html;
  }

  // the CLI asks the engine and only writes the answer: its file is the engine's page, byte for byte (the clock
  // fixed: a report records when it was made)
  it('titled by the verdict (watchdog job: its dumps and logs)', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2026-12-01T10:00:00Z'));
    const wd = resolve(ROOT, 'fixtures', 'watchdog-job');
    const paths = [join(wd, 'dumps'), join(wd, 'logs')];
    const out = join(dir, 'engine-watchdog.html');
    expect((await cli('report', ...paths, '-o', out, '--no-symbols')).code).toBe(0);
    const html = await engineReport(paths, { title: 'heaplens report: dumps, logs', titleByVerdict: true });
    expect(readFileSync(out, 'utf8') === html).toBe(true);
  });

  it('with a session, --base/--target by sequence number, --sanitize, -n and --stacks', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2026-12-01T10:00:00Z'));
    // the session selects a process: the CLI's --base/--target still name every process's snapshots
    const sessionPath = join(dir, 'engine-s.json');
    const sel = emptySession('t');
    writeFileSync(sessionPath, serializeSession({ ...sel, selection: { ...sel.selection, process: `job/${EXACT}` } }));
    const out = join(dir, 'engine-job.html');
    const r = await cli(
      'report',
      job,
      '-o',
      out,
      '--session',
      sessionPath,
      '--base',
      '3',
      '--target',
      '20',
      '--sanitize',
      '-n',
      '7',
      '--stacks',
      'native',
      '--title',
      'fixture job',
      '--no-symbols',
    );
    expect(r.code, r.err).toBe(0);
    const html = await engineReport([job], {
      bySeq: { base: '3', target: '20' },
      session: await loadSessionFile(sessionPath),
      title: 'fixture job',
      topN: 7,
      sanitize: { paths: true, maps: true },
      view: { mode: 'native', hideAllocator: true },
    });
    expect(readFileSync(out, 'utf8') === html).toBe(true);
  });

  it('a job with exit dumps after teardown (oom-job), in another sample type', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2026-12-01T10:00:00Z'));
    const oom = resolve(ROOT, 'fixtures', 'oom-job');
    const paths = [join(oom, 'dumps'), join(oom, 'logs')];
    const out = join(dir, 'engine-oom.html');
    expect((await cli('report', ...paths, '-o', out, '--sample', 'alloc_space', '--no-symbols')).code).toBe(0);
    const html = await engineReport(paths, {
      title: 'heaplens report: dumps, logs',
      titleByVerdict: true,
      view: { mode: 'python-first', hideAllocator: true, sample: 'alloc_space' },
    });
    expect(readFileSync(out, 'utf8') === html).toBe(true);
  });
});
