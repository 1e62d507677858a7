// What the fuzzer feeds and what must hold for every mutant: each reader of untrusted input either gives
// a result whose numbers are finite sizes, or refuses with its own error type (naming the file) — never
// another exception, a hang past the time budget, or memory past the RSS bound (fuzz.test.ts).

import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { loadJob } from '../../core/load/load-job.js';
import type { Job } from '../../core/model/model.js';
import type { InputFile } from '../../core/formats/input-file.js';
import { parseMaps } from '../../core/formats/proc-maps.js';
import { parsePyFrames } from '../../core/formats/pyframes.js';
import { parseSystingCodeMap } from '../../core/formats/systing-codemap.js';
import { parsePerfMap } from '../../core/symbolize/perf-map.js';
import { PickleError, readPickle } from '../../core/formats/pickle.js';
import { memoBomb } from './pickle-ops.js';
import { parseMemleak } from '../../core/formats/memleak.js';
import { parseSession, serializeSession, SessionError } from '../../core/notes/validate.js';
import { emptySession } from '../../core/notes/schema.js';
import { addNote, createNote, snapshotRef, stackTarget } from '../../core/notes/notes.js';
import { buildReport } from '../../core/report/build-report.js';
import { buildReportHtml } from '../../core/report/html.js';
import { reopenReport } from '../../core/report/reopen.js';
import { ReportError } from '../../core/report/errors.js';
import { FIXTURES, fixtureFiles } from '../fixtures.js';
import { deflateSync } from 'node:zlib';
import { readPayload, unpackJob } from '../../core/report/job-unpack.js';
import { parseKernelOomLog } from '../../core/formats/kernel-oom.js';
import { parseCgroupFile } from '../../core/formats/cgroup-memory.js';
import { parseJobLog } from '../../core/formats/job-log.js';
import { parseRssLog } from '../../core/formats/rss-log.js';
import { MAX_COUNT } from '../../core/formats/limits.js';

export interface Target {
  name: string;
  seeds: Uint8Array[];
  /** throws (an Error whose message says what broke) when an invariant does not hold */
  run(bytes: Uint8Array, seed: number): Promise<void>;
}

const dec = new TextDecoder();
const enc = new TextEncoder();
const mem = (path: string, bytes: Uint8Array): InputFile => ({
  path,
  size: bytes.length,
  mtimeMs: null,
  read: async (o, l) => bytes.subarray(o, o + l),
});
const read = (...p: string[]): Uint8Array => new Uint8Array(readFileSync(join(FIXTURES, ...p)));
const PY = join(FIXTURES, '..', 'python');

class Broken extends Error {}
function check(ok: boolean, what: string): void {
  if (!ok) throw new Broken(what);
}

/** Every number of a job that reaches a view is a finite size, and every warning names a given file. */
function checkJob(job: Job, paths: readonly string[]): void {
  for (const p of job.processes) {
    for (const s of p.snapshots) {
      // a pprof delta profile keeps its negative values (as pprof does): finite and within 2^53 either way
      const ok = (v: number) => (s.format === 'pprof' ? Math.abs(v) <= 2 ** 53 : v >= 0 && v < Infinity);
      for (const v of [s.live.bytes, s.live.objects, s.accumulated.bytes, s.accumulated.objects])
        check(ok(v), `${s.file}: total ${v}`);
      for (const col of [s.liveBytes, s.liveObjects, s.accumBytes, s.accumObjects]) {
        if (col) for (const v of col) check(ok(v), `${s.file}: cell ${v}`);
      }
      for (const t of s.threads)
        check(t.live.bytes >= 0 && t.live.bytes < Infinity, `${s.file}: thread ${t.uid} ${t.live.bytes}`);
    }
    for (let k = 0; k < p.stacks.count; k++)
      check(p.stacks.offsets[k + 1] - p.stacks.offsets[k] <= 1024, `${p.key}: stack ${k} deeper than the frame cap`);
  }
  for (const w of job.warnings)
    check(
      paths.includes(w.file) || job.processes.some((p) => p.key === w.file),
      `warning names an unknown file: ${w.file}`,
    );
}

/**
 * Every number a reader gives back is finite and within 2^64 in size (a figure past that is absurd for any byte
 * count, time in ms or id), walking the whole result; `at` names where.
 */
function checkFigures(v: unknown, at: string, depth = 0): void {
  if (typeof v === 'number') {
    check(Number.isFinite(v) && Math.abs(v) <= 2 ** 64, `${at}: ${v}`);
    return;
  }
  if (typeof v !== 'object' || v === null || depth > 12) return;
  if (ArrayBuffer.isView(v)) {
    for (const x of v as unknown as Iterable<number>)
      check(Number.isFinite(x) && Math.abs(x) <= 2 ** 64, `${at}: ${x}`);
    return;
  }
  const entries = v instanceof Map ? [...v.entries()] : Object.entries(v);
  for (const [k, x] of entries) checkFigures(x, `${at}.${String(k)}`, depth + 1);
}

async function jobOf(files: [string, Uint8Array][]): Promise<void> {
  const job = await loadJob(files.map(([p, b]) => mem(p, b)));
  checkJob(
    job,
    files.map(([p]) => p),
  );
}

/** Errors a reader may refuse with; anything else is a finding. */
function refusesWith(e: unknown, ...types: (new (...a: never[]) => Error)[]): void {
  if (e instanceof Broken) throw e;
  if (!types.some((t) => e instanceof t))
    throw new Broken(`unexpected ${e instanceof Error ? `${e.name}: ${e.message}` : String(e)}`);
}

function dumpSeeds(): Uint8Array[] {
  const job = readdirSync(join(FIXTURES, 'job')).sort();
  const pick = [
    job.find((n) => /^exact\..*\.f\.heap$/.test(n))!,
    job.find((n) => /^sampled\..*\.0\.i0\.heap$/.test(n))!,
    job.find((n) => /^pygrow\..*\.1\.i1\.heap$/.test(n))!,
  ];
  return [
    ...pick.map((n) => read('job', n)),
    read('other', 'gperf.0001.heap'),
    read('other', 'empty-backtrace.heap'),
    read('damaged', 'truncated-in-maps.heap'),
  ];
}

async function sessionSeed(): Promise<Uint8Array> {
  const job = await loadJob(fixtureFiles('job'));
  const p = job.processes[0];
  const t0 = new Date('2026-11-29T10:00:00Z');
  let s = emptySession('fuzz');
  s = addNote(s, createNote(stackTarget(p, 0), 'a stack', '#e4572e', t0));
  s = addNote(s, createNote({ kind: 'frame', process: null, function: 'make_node' }, 'a frame', '#2a9d8f', t0));
  s = addNote(
    s,
    createNote(
      { kind: 'span', process: p.key, from: snapshotRef(p, 0), to: snapshotRef(p, 2) },
      'a span\nline 2',
      '#29335c',
      t0,
    ),
  );
  return enc.encode(serializeSession(s, t0));
}

async function reportSeed(): Promise<Uint8Array> {
  const job = await loadJob(fixtureFiles('job'));
  const { job: header, bytes } = buildReport(
    job.processes.slice(0, 1).map((proc) => ({ proc, symbols: null })),
    { topN: 3 },
  );
  return enc.encode(await buildReportHtml(bytes, header, { js: 'void 0;', css: '' }));
}

const torchSeed = (...p: string[]): Uint8Array => read('..', 'torch', ...p);
const OOM = join(FIXTURES, '..', 'oom-job', 'logs');
const oomSeed = (...p: string[]): Uint8Array => new Uint8Array(readFileSync(join(OOM, ...p)));

/** A report's payload inflated (header + columns), to mutate before deflating again: edits the unpacker sees. */
async function payloadSeed(): Promise<Uint8Array> {
  const job = await loadJob(fixtureFiles('job'));
  const { bytes } = buildReport(
    job.processes.map((proc) => ({ proc })),
    { topN: 3 },
  );
  const { job: header, cols } = readPayload(bytes);
  const json = enc.encode(JSON.stringify(header));
  const pad = (4 - ((4 + json.length) % 4)) % 4;
  const raw = new Uint8Array(4 + json.length + pad + cols.length);
  new DataView(raw.buffer).setUint32(0, json.length, true);
  raw.set(json, 4);
  raw.set(cols, 4 + json.length + pad);
  return raw;
}

/** A job read from a report must hold what a loaded job holds: finite sizes, stacks within the frame cap. */
function checkUnpacked(job: Job): void {
  checkJob(job, [...job.warnings.map((w) => w.file), ...job.processes.map((p) => p.key)]);
  for (const p of job.processes)
    for (const s of p.snapshots) {
      for (const id of s.stackIds) check(id < p.stacks.count, `${p.key}: cell of stack ${id} of ${p.stacks.count}`);
      for (const v of s.liveVarBytes) check(v >= 0 && v <= Infinity && v === v, `${s.file}: variance ${v}`);
      check(s.live.bytes <= MAX_COUNT, `${s.file}: total ${s.live.bytes}`);
    }
}

/** A capture's sidecar split around its `C` lines, so a mutant of the block is put back between the other lines. */
function contextTargets(): Target[] {
  const DIR = join(FIXTURES, '..', 'job', 'dumps');
  const picks = ['job.7899.0.i0.heap', 'job.7901.12.i12.heap'];
  const parts = picks.map((name) => {
    const lines = readFileSync(join(DIR, name + '.pyframes'), 'utf8').split(/(?<=\n)/);
    const first = lines.findIndex((l) => l.startsWith('C '));
    let end = first;
    while (end < lines.length && lines[end].startsWith('C ')) end++;
    return {
      name,
      dump: new Uint8Array(readFileSync(join(DIR, name + '.gz'))),
      before: lines.slice(0, first).join(''),
      block: enc.encode(lines.slice(first, end).join('')),
      after: lines.slice(end).join(''),
    };
  });
  // one target per capture: a block read with another capture's dump is dropped whole (another pid), testing little
  return parts.map((p, k) => ({
    name: k === 0 ? 'context lines' : `context lines ${p.name}`,
    seeds: [p.block],
    run: async (b: Uint8Array) => {
      const path = `c/${p.name}.gz`;
      const side = `c/${p.name}.pyframes`;
      const job = await loadJob([mem(path, p.dump), mem(side, enc.encode(p.before + dec.decode(b) + p.after))]);
      checkJob(job, [path, side]);
      const contexts = job.processes.flatMap((q) => q.snapshots.flatMap((s) => (s.context ? [s.context] : [])));
      for (const c of contexts) checkFigures(c, `${path}: context`);
      // an unchanged block must give its context, or the figures above would never be checked
      if (b.length === p.block.length && dec.decode(b) === dec.decode(p.block))
        check(contexts.length === 1, `${path}: the unchanged context block gave ${contexts.length} contexts`);
    },
  }));
}

export async function targets(): Promise<Target[]> {
  const dumps = dumpSeeds();
  const pyDump = read(
    '..',
    'python',
    'py312',
    readdirSync(join(PY, 'py312')).find((n) => n.endsWith('.1.m1.heap'))!,
  );
  const pyName = readdirSync(join(PY, 'py312')).find((n) => n.endsWith('.1.m1.heap'))!;
  const noMaps = read('damaged', 'no-maps-section.heap');
  const pprofSeeds = [
    ...['001', '003'].map((n) => join(FIXTURES, '..', 'go', 'pprof-series', `heap.${n}.pb.gz`)),
    join(FIXTURES, '..', 'go', 'delta', 'heap-delta.pb.gz'),
  ].map((f) => new Uint8Array(gunzipSync(readFileSync(f))));
  const leak = join(FIXTURES, '..', 'go', 'leak-series');
  const leakSeed = new Uint8Array(
    gunzipSync(
      readFileSync(
        join(
          leak,
          readdirSync(leak).find((n) => n.endsWith('.pb.gz'))!,
        ),
      ),
    ),
  );
  const massif = new Uint8Array(readFileSync(join(FIXTURES, '..', 'massif', 'massif.out.grow')));
  const mapsText = dec.decode(dumps[0]).split('MAPPED_LIBRARIES:\n')[1];
  return [
    { name: 'dump', seeds: dumps, run: (b) => jobOf([['d/x.7.0.m0.heap', b]]) },
    // the readers of issue 21, through the loader (sniffing, decompression, the reader, the model)
    { name: 'pprof', seeds: pprofSeeds, run: (b) => jobOf([['d/heap.pb', b]]) },
    // a series by the names' pids, each profile's identity (time, pid labels) walked before it is read
    {
      name: 'pprof-series',
      seeds: [leakSeed],
      run: (b) =>
        jobOf([
          ['d/svc-4242-001.pb', b],
          ['d/svc-4242-002.pb', leakSeed],
        ]),
    },
    {
      name: 'pprof.gz',
      seeds: pprofSeeds.map((d) => new Uint8Array(gzipSync(d))),
      run: (b) => jobOf([['d/heap.pb.gz', b]]),
    },
    {
      name: 'massif',
      seeds: [massif, new Uint8Array(readFileSync(join(FIXTURES, '..', 'massif', 'massif.out.pages')))],
      run: (b) => jobOf([['d/massif.out.1', b]]),
    },
    ...(['zst', 'bz2', 'xz'] as const).map((ext) => ({
      name: `massif.${ext}`,
      seeds: [new Uint8Array(readFileSync(join(FIXTURES, '..', 'massif', `massif.out.grow.${ext}`)))],
      run: (b: Uint8Array) => jobOf([[`d/massif.out.1.${ext}`, b]]),
    })),
    {
      name: 'dump.gz',
      seeds: dumps.map((d) => new Uint8Array(gzipSync(d))),
      run: (b) => jobOf([['d/x.7.0.m0.heap.gz', b]]),
    },
    {
      name: 'dump beside a good one',
      seeds: dumps.slice(0, 2),
      // a damaged dump never changes its neighbour's figures: the good one's totals are checked too
      run: async (b) => {
        const good = dumps[0];
        const alone = await loadJob([mem('d/x.7.1.m1.heap', good)]);
        const both = await loadJob([mem('d/x.7.0.m0.heap', b), mem('d/x.7.1.m1.heap', good)]);
        checkJob(both, ['d/x.7.0.m0.heap', 'd/x.7.1.m1.heap']);
        const s = both.processes[0]?.snapshots.find((x) => x.file === 'd/x.7.1.m1.heap');
        check(
          s !== undefined && s.live.bytes === alone.processes[0].snapshots[0].live.bytes,
          'the good dump lost or changed its total',
        );
      },
    },
    {
      name: 'pyframes sidecar',
      seeds: [read('..', 'python', 'py312', pyName + '.pyframes')],
      run: (b) =>
        jobOf([
          [`p/${pyName}`, pyDump],
          [`p/${pyName}.pyframes`, b],
        ]),
    },
    {
      name: 'pyframes text',
      seeds: [read('..', 'python', 'py312', pyName + '.pyframes')],
      run: async (b) => {
        parsePyFrames(dec.decode(b));
      },
    },
    {
      name: 'maps',
      seeds: [enc.encode(mapsText)],
      run: async (b) => {
        const { entries } = parseMaps(dec.decode(b));
        for (let i = 1; i < entries.length; i++)
          check(entries[i - 1].start <= entries[i].start, 'maps entries not sorted');
        await jobOf([
          ['m/x.7.0.m0.heap', noMaps],
          ['m/maps.7', b],
        ]);
      },
    },
    {
      name: 'pickle',
      // structural seeds (issue 46): shared memo references nested three deep, whose mutants keep the sharing
      seeds: [
        torchSeed('snapshot-p2.pickle'),
        torchSeed('snapshot-p4.pickle'),
        torchSeed('hostile', 'cycle.pickle'),
        memoBomb(4).bytes,
        memoBomb(60).bytes,
      ],
      run: async (b) => {
        try {
          readPickle(b);
        } catch (e) {
          refusesWith(e, PickleError);
        }
      },
    },
    {
      name: 'pytorch snapshot',
      // values beyond Date's range, sizes past 2^53, C++ frames, the bare segment list, shared references
      seeds: [
        torchSeed('snapshot-p2.pickle'),
        torchSeed('snapshot-ring.pickle'),
        torchSeed('snapshot-cpp.pickle'),
        torchSeed('segments-list.pickle'),
        torchSeed('hostile', 'bounds.pickle'),
        torchSeed('hostile', 'oom-time.pickle'),
        memoBomb(60).bytes,
      ],
      run: (b) => jobOf([['t/snapshot.pickle', b]]),
    },
    {
      name: 'memleak',
      seeds: [
        read('..', 'ebpf', 'memleak.txt'),
        read('..', 'ebpf', 'memleak.bcc-spaces.txt'),
        read('..', 'ebpf', 'memleak.libbpf.txt'),
      ],
      run: async (b) => {
        const m = parseMemleak(dec.decode(b));
        for (const r of m.reports)
          for (const st of r.stacks)
            check(Number.isSafeInteger(st.bytes) && st.bytes >= 0, `memleak bytes ${st.bytes}`);
        await jobOf([['e/memleak.txt', b]]);
      },
    },
    {
      name: 'perf map',
      seeds: [read('..', 'python', 'perf-map', 'perf-9293.map')],
      run: async (b) => {
        parsePerfMap(dec.decode(b), 'perf-9293.map');
      },
    },
    {
      name: 'systing code map',
      seeds: [read('..', 'python', 'systing', 'pycode-4242-00c0ffee12345678-py312.map')],
      run: async (b) => {
        parseSystingCodeMap(dec.decode(b));
      },
    },
    {
      name: 'session file',
      seeds: [await sessionSeed()],
      run: async (b) => {
        try {
          parseSession(dec.decode(b));
        } catch (e) {
          refusesWith(e, SessionError);
        }
      },
    },
    // the readers of issue 24: report payloads through the unpacker, and the why-it-died text inputs
    {
      name: 'report payload',
      seeds: [await payloadSeed()],
      run: async (b) => {
        let out: Job;
        try {
          out = unpackJob(new Uint8Array(deflateSync(b))).job;
        } catch (e) {
          refusesWith(e, ReportError);
          return;
        }
        checkUnpacked(out);
      },
    },
    {
      name: 'kernel OOM log',
      seeds: [oomSeed('dmesg.txt'), oomSeed('dmesg-T.txt')],
      run: async (b) => checkFigures(parseKernelOomLog(dec.decode(b), 2026), 'kernel log'),
    },
    {
      name: 'cgroup file',
      seeds: ['memory.stat', 'memory.limit_in_bytes', 'memory.usage_in_bytes', 'memory.oom_control'].map((n) =>
        oomSeed('cgroup', n),
      ),
      run: async (b, i) => {
        const names = ['memory.stat', 'memory.limit_in_bytes', 'memory.max', 'memory.events', 'memory.peak'];
        checkFigures(parseCgroupFile(`/sys/fs/cgroup/x/${names[Math.abs(i) % names.length]}`, dec.decode(b)), 'cgroup');
      },
    },
    {
      name: 'job log',
      seeds: [oomSeed('job.log')],
      run: async (b) => checkFigures(parseJobLog(dec.decode(b)), 'job log'),
    },
    {
      name: 'rss csv',
      seeds: [read('..', 'rss-log', 'rss.csv')],
      run: async (b) => {
        const log = parseRssLog(dec.decode(b), Date.UTC(2026, 11, 1));
        checkFigures(log, 'rss log');
      },
    },
    // the context records (`C key value`, core/formats/dump-context.ts) of real captures: only that block mutated,
    // read with its dump through the loader; every figure of the snapshot's context must be finite and within 2^64
    ...contextTargets(),
    {
      name: 'report envelope',
      seeds: [await reportSeed()],
      run: async (b) => {
        try {
          reopenReport(dec.decode(b));
        } catch (e) {
          refusesWith(e, ReportError, SessionError);
        }
      },
    },
  ];
}
