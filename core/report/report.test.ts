// The report's payload and page: totals against jeprof after packing, the known leak kept with its exact series,
// CSP and inline-script hashes checked with Node's crypto, report → reopen equals, sanitizing, hostile names
// kept intact as data.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadJob } from '../load/load-job.js';
import { diffSnapshots } from '../stats/diff.js';
import type { ProcessSeries } from '../model/model.js';
import { collectInputFiles } from '../../node/io/node-files.js';
import { NodeSymbolFileSource, readAddr2lineWasm } from '../../node/io/symbol-files.js';
import { fixtureFiles, fixturePath, jeprofTotals, jobProcess, pprofRawSums } from '../../tools/fixtures.js';
import { Symbolizer } from '../symbolize/symbolize.js';
import { compileAddr2line } from '../symbolize/wasm-addr2line.js';
import { emptySession, type Session } from '../notes/schema.js';
import { addNote, createNote, resolveStack, snapshotRef, stackTarget } from '../notes/notes.js';
import { buildReport } from './build-report.js';
import { buildReportHtml, extractPayload } from './html.js';
import { OTHER_ADDRESS } from './job-pack.js';
import { readPayload, unpackJob } from './job-unpack.js';
import { ReportError } from './errors.js';
import { reopenReport, reportToSession } from './reopen.js';
import { deflate } from 'pako';

const [EXACT, PYGROW, SAMPLED] = ['exact', 'pygrow', 'sampled'].map(jobProcess);

const APP = { js: 'document.getElementById("app").textContent = "report";', css: 'body{margin:0}' };
const META = { title: 't', generator: 'test' };
const ROOT = resolve(import.meta.dirname, '..', '..');

async function jobWithSession(): Promise<{ job: Awaited<ReturnType<typeof loadJob>>; session: Session; leak: number }> {
  const job = await loadJob(await collectInputFiles([fixturePath('job')]));
  const p = job.processes.find((x) => x.prefix === 'exact')!;
  const last = p.snapshots[p.snapshots.length - 1];
  const leak = last.stackIds[[...last.liveBytes].indexOf(20 * 3 * 16384)];
  let session: Session = {
    ...emptySession('test'),
    files: [fixturePath('job')],
    symbols: { dirs: [fixturePath('bin')], sysroot: null, enabled: true },
  };
  session.selection = { process: p.key, base: snapshotRef(p, 2), target: snapshotRef(p, 12) };
  const t = new Date('2026-11-29T10:00:00Z');
  session = addNote(
    session,
    createNote(stackTarget(p, leak, 'make_node'), 'the leak <b>never</b> freed', '#e4572e', t),
  );
  session = addNote(
    session,
    createNote(
      { kind: 'span', process: p.key, from: snapshotRef(p, 3), to: snapshotRef(p, 6) },
      'warm-up',
      '#2a9d8f',
      t,
    ),
  );
  session = addNote(
    session,
    createNote({ kind: 'frame', process: null, function: 'make_node' }, 'allocates', '#f3a712', t),
  );
  return { job, session, leak };
}

const inputsOf = (procs: ProcessSeries[]) => procs.map((proc) => ({ proc }));
const liveSum = (p: ProcessSeries, si: number): number => p.snapshots[si].liveBytes.reduce((a, b) => a + b, 0);
/** float32 cells: each value within 2^-24 of itself, so a sum within that of its total (plus jeprof's floor) */
const close = (a: number, b: number): boolean => Math.abs(a - b) <= 1 + 1e-6 * Math.abs(b);

describe('report data', () => {
  it('per process and snapshot, the kept stacks plus "other" add up to the snapshot totals, which equal jeprof\'s', async () => {
    const ref = jeprofTotals();
    const job = await loadJob(fixtureFiles('job'));
    const { job: header, bytes } = buildReport(inputsOf(job.processes), { topN: 3 });
    const back = unpackJob(bytes).job;
    back.processes.forEach((p, k) => {
      const orig = job.processes[k];
      const hp = header.processes[k];
      expect(hp.base).toBe(0);
      expect(hp.target).toBe(p.snapshots.length - 1);
      expect(hp.otherStacks).toBeGreaterThan(0);
      expect(hp.sourceIds.length + hp.otherStacks).toBe(orig.stacks.count);
      expect(p.stacks.count).toBe(hp.sourceIds.length + 1);
      expect(p.addresses.hex[p.stacks.frames[p.stacks.offsets[p.stacks.count - 1]]]).toBe(OTHER_ADDRESS);
      p.snapshots.forEach((s, si) => {
        expect(
          close(liveSum(p, si), ref.get(s.file)!.inuseSpace),
          `${s.file}: ${liveSum(p, si)} vs ${ref.get(s.file)!.inuseSpace}`,
        ).toBe(true);
        expect(Math.floor(s.live.bytes)).toBe(ref.get(s.file)!.inuseSpace);
      });
      // kept stacks keep their values: the diff of the last two dumps, stack by stack
      const n = p.snapshots.length;
      const d = new Map(diffSnapshots(orig, 0, n - 1).map((x) => [x.stackId, x] as const));
      for (const x of diffSnapshots(p, 0, n - 1)) {
        if (x.stackId === p.stacks.count - 1) continue;
        const o = d.get(hp.sourceIds[x.stackId])!;
        expect(close(x.targetBytes, o.targetBytes) && close(x.baseBytes, o.baseBytes)).toBe(true);
      }
    });
  });

  it("the exact run's leak is kept with its exact series: 3 × 16,384 B per dump, the final dump equal to the last", async () => {
    const { job, leak } = await jobWithSession();
    const exact = job.processes.find((x) => x.prefix === 'exact')!;
    const { bytes } = buildReport([{ proc: exact }], { topN: 1 });
    const p = unpackJob(bytes).job.processes[0];
    const id = resolveStack(p, stackTarget(exact, leak));
    expect(id).not.toBeNull();
    const series = p.snapshots.map((s) => {
      const j = [...s.stackIds].indexOf(id!);
      return j < 0 ? 0 : s.liveBytes[j];
    });
    expect(series).toEqual([...Array.from({ length: 20 }, (_, k) => (k + 1) * 3 * 16384), 20 * 3 * 16384]);
  });

  it("the session's selection and notes: base/target from it, noted stacks kept", async () => {
    const { job, session } = await jobWithSession();
    const { job: header, bytes } = buildReport(inputsOf(job.processes), { session, topN: 0 });
    const k = header.processes.findIndex((x) => x.key === session.selection.process);
    const hp = header.processes[k];
    expect(hp.snapshots[hp.base].file).toBe(session.selection.base!.file);
    expect(hp.snapshots[hp.target].file).toBe(session.selection.target!.file);
    // topN 0: the only kept stack is the noted one (+ "other")
    expect(hp.sourceIds).toHaveLength(1);
    const p = unpackJob(bytes).job.processes[k];
    const note = session.notes.find((n) => n.target.kind === 'stack')!;
    expect(resolveStack(p, note.target as never)).toBe(0);
    expect(header.notes).toEqual(session.notes);
  });
});

describe('report page', () => {
  it('has a CSP allowing only its own inline script and style (by SHA-256), and nothing that loads', async () => {
    // the real report page (dist/report-app, built by npm run build), not a stand-in
    const js = resolve(ROOT, 'dist', 'report-app', 'report.js');
    const css = resolve(ROOT, 'dist', 'report-app', 'report.css');
    expect(existsSync(js) && existsSync(css), `${js} is missing: npm run build makes it`).toBe(true);
    const page = { js: readFileSync(js, 'utf8'), css: readFileSync(css, 'utf8') };
    expect(page.js.length).toBeGreaterThan(100_000); // the whole app: Svelte views, d3, the in-page engine
    const job = await loadJob(fixtureFiles('job'));
    const { bytes } = buildReport(inputsOf(job.processes));
    const html = await buildReportHtml(bytes, META, page);
    const csp = /<meta http-equiv="Content-Security-Policy" content="([^"]+)">/.exec(html)![1].replace(/&#39;/g, "'");
    const scripts = [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((m) => m[1]);
    // (the app's code may hold the text "<style>": look for style elements outside the scripts)
    const noScripts = html.replace(/<script>[\s\S]*?<\/script>/g, '');
    const styles = [...noScripts.matchAll(/<style>([\s\S]*?)<\/style>/g)].map((m) => m[1]);
    expect(scripts).toHaveLength(1);
    expect(styles).toHaveLength(1);
    const sha = (s: string): string => createHash('sha256').update(s, 'utf8').digest('base64');
    expect(csp).toBe(
      `default-src 'none'; script-src 'sha256-${sha(scripts[0])}'; style-src 'sha256-${sha(styles[0])}'; img-src data:; base-uri 'none'; form-action 'none'`,
    );
    // the inline script is the app's bundle (with only "</script" sequences escaped)
    expect(scripts[0].length).toBeGreaterThanOrEqual(page.js.length);
    expect(scripts[0].slice(0, 200)).toBe(page.js.slice(0, 200));
    // the markup around the inline code loads nothing; the stylesheet imports nothing and names no URL but data:
    const markup = noScripts.replace(/<style>[\s\S]*?<\/style>/g, '');
    expect(markup).not.toMatch(/\s(src|href)=/i);
    expect(styles[0]).not.toMatch(/@import/i);
    for (const u of styles[0].matchAll(/url\(\s*['"]?([^'")]*)/gi)) expect(u[1]).toMatch(/^data:/);
    // the data element is inert: a non-JavaScript type, base64 only
    const m = /<script id="heaplens-report-data" type="application\/x-heaplens-report">([^<]*)<\/script>/.exec(html)!;
    expect(m[1]).toMatch(/^[A-Za-z0-9+/=]+$/);
  });

  it('an inline script containing "</script" cannot end its element early', async () => {
    const job = await loadJob(fixtureFiles('job'));
    const { bytes } = buildReport(inputsOf(job.processes.slice(0, 1)));
    const html = await buildReportHtml(bytes, META, {
      js: 'var s = "</script><img src=x onerror=alert(1)>";',
      css: 'a{}</style><b>x</b>',
    });
    expect(html.match(/<\/script>/g)).toHaveLength(2);
    expect(html.match(/<\/style>/g)).toHaveLength(1);
    expect(html).toContain('var s = "<\\/script><img src=x onerror=alert(1)>";');
  });

  it('report → reopen equals: the job, and a read-only session with the notes', async () => {
    const { job, session } = await jobWithSession();
    const { job: header, bytes } = buildReport(inputsOf(job.processes), { session, title: 'leak in <exact>' });
    const html = await buildReportHtml(bytes, { title: header.title, generator: header.generator }, APP);
    expect(html).toContain('<title>leak in &lt;exact&gt;</title>');
    const back = reopenReport(html);
    expect(back.header).toEqual(JSON.parse(JSON.stringify(header)));
    expect(back.job.processes.map((p) => p.snapshots.map((s) => s.live.bytes))).toEqual(
      job.processes.map((p) => p.snapshots.map((s) => s.live.bytes)),
    );
    expect(back.session.readOnly).toBe(true);
    expect(back.session.source).toEqual({ kind: 'report', title: 'leak in <exact>', createdAt: header.createdAt });
    expect(back.session.notes).toEqual(session.notes);
    expect(back.session.selection).toEqual(session.selection);
    expect(back.session.files).toEqual(session.files);
  });

  it('damaged, foreign, older or newer reports are refused with a clear message', async () => {
    expect(() => extractPayload('<html><body>hello</body></html>')).toThrow(ReportError);
    const job = await loadJob(fixtureFiles('job'));
    const { job: header, bytes } = buildReport(inputsOf(job.processes.slice(0, 1)));
    const html = await buildReportHtml(bytes, META, APP);
    expect(() =>
      extractPayload(html.replace(/(id="heaplens-report-data"[^>]*>)([A-Za-z0-9+/]{40})/, '$1$2!!')),
    ).toThrow(/damaged/);
    expect(() => extractPayload(html.slice(0, html.indexOf('heaplens-report-data') + 200))).toThrow(/cut off/);
    expect(() => unpackJob(bytes.slice(0, bytes.length >> 1))).toThrow(/damaged/);
    // a payload with another header: newer, older, foreign, an index out of range
    const { cols: data } = readPayload(bytes);
    const cols = data;
    const repack = (h: unknown, cols = data): Uint8Array => {
      const json = new TextEncoder().encode(JSON.stringify(h));
      const pad = (4 - ((4 + json.length) % 4)) % 4;
      const raw = new Uint8Array(4 + json.length + pad + cols.length);
      new DataView(raw.buffer).setUint32(0, json.length, true);
      raw.set(json, 4);
      raw.set(cols, 4 + json.length + pad);
      return deflate(raw);
    };
    expect(() => unpackJob(repack({ ...header, version: 4 }))).toThrow(
      'written by a newer heaplens (report version 4); this one reads up to 3',
    );
    // version 2 kept frames per process: its page shows it, this reader says so
    expect(() => unpackJob(repack({ ...header, version: 2 }))).toThrow(
      'this report was written by an older heaplens (report version 2), whose reports only its own page shows; open the report in a browser',
    );
    expect(() => unpackJob(repack({ ...header, format: 'x' }))).toThrow('not a heaplens report');
    // a stack's frame that is not one of the job's frames
    const c = cols.slice();
    new DataView(c.buffer).setUint32(header.stacks.frames.o, header.frames.addresses.length, true);
    expect(() => unpackJob(repack(header, c))).toThrow(
      `stacks.frames[0]: expected an index below ${header.frames.addresses.length}`,
    );
    const bad2 = structuredClone(header);
    bad2.processes[0].cellBytes = { ...bad2.processes[0].cellBytes, o: 1 << 30 };
    expect(() => unpackJob(repack(bad2))).toThrow(/processes\[0\]\.cellBytes: /);
    // issue 24 item 14: a title from a folder name with a bidi override is shown marked in the banner
    expect(reportToSession({ ...header, title: 'job\u202egpj.exe' }).source?.title).toBe('job<U+202E>gpj.exe');
    // a session embedded with bad fields is refused as untrusted input
    expect(() =>
      reportToSession({ ...header, notes: [{ ...(header.notes[0] ?? {}), color: 'javascript:x' } as never] }),
    ).toThrow();
  });
});

describe('sanitize', () => {
  it('strips every directory (dumps, processes, sources, modules, session paths), reduces the maps, and previews exactly that', async () => {
    const { job, session } = await jobWithSession();
    const wasm = await compileAddr2line(await readAddr2lineWasm());
    const sym = new Symbolizer(new NodeSymbolFileSource(), {
      wasm,
      symbolDirs: [fixturePath('bin')],
      hostPaths: false,
    });
    const inputs = [];
    for (const proc of job.processes) {
      proc.symbols = await sym.symbolizeProcess(proc);
      inputs.push({ proc });
    }
    await sym.dispose();
    const plain = buildReport(inputs, { session }).job;
    // unsanitized, the source files are paths as DWARF has them and the maps are whole
    expect(JSON.stringify(plain)).toContain('"./leaky.c"');
    plain.processes.forEach((p, k) => expect(p.maps?.length).toBe(job.processes[k].maps?.length));
    const { job: data, preview } = buildReport(inputs, {
      session,
      sanitize: { paths: true, maps: true },
      warnings: [{ file: '/secret/dir/x.heap', message: 'could not read /secret/dir/x.heap: EACCES' }],
    });
    const json = JSON.stringify(data);
    expect(json).not.toContain(ROOT);
    expect(json).not.toContain('/secret/');
    expect(json).not.toContain('./leaky.c');
    expect(data.processes.map((p) => p.key).sort()).toEqual([EXACT, PYGROW, SAMPLED]);
    for (const p of data.processes) {
      expect(p.snapshots.every((s) => !s.file.includes('/'))).toBe(true);
      // only the module ranges the kept frames fall in, by basename
      expect(p.maps!.every((m) => !m.path.includes('/'))).toBe(true);
      expect(p.maps!.length).toBeLessThan(job.processes.find((x) => x.key.endsWith(p.key))!.maps!.length);
    }
    expect(data.session.files).toEqual(['job']);
    expect(data.warnings).toEqual([{ file: 'x.heap', message: 'could not read x.heap: EACCES' }]);
    // the preview lists what goes: each path and its replacement, the maps per process
    expect(preview.paths).toContainEqual({ from: `job/${EXACT}`, to: EXACT });
    expect(preview.paths).toContainEqual({ from: fixturePath('job'), to: 'job' });
    expect(preview.paths).toContainEqual({ from: './leaky.c', to: 'leaky.c' });
    expect(preview.maps.map((m) => m.process).sort()).toEqual([EXACT, PYGROW, SAMPLED]);
    for (const x of preview.paths) expect(json).not.toContain(JSON.stringify(x.from));
    // notes still point at their stack and process after renaming
    const back = unpackJob(buildReport(inputs, { session, sanitize: { paths: true, maps: true } }).bytes);
    const k = data.processes.findIndex((x) => x.key === EXACT);
    const note = data.notes.find((n) => n.target.kind === 'stack')!;
    expect(resolveStack(back.job.processes[k], note.target as never)).not.toBeNull();
    expect(data.session.selection.process).toBe(EXACT);
  });

  it('process keys that collide once shortened stay distinct', async () => {
    const a = await loadJob(await collectInputFiles([fixturePath('job')]));
    const b = await loadJob(await collectInputFiles([fixturePath('job')]));
    const pa = a.processes[0];
    const pb = { ...b.processes[0], key: 'node2/' + b.processes[0].key };
    const { job } = buildReport(inputsOf([pa, pb]), { sanitize: { paths: true } });
    expect(job.processes.map((p) => p.key)).toEqual([EXACT, `${EXACT}~2`]);
  });
});

describe('hostile names', () => {
  it('reach the report as data, unchanged (control characters already replaced by the reader); the page has only its own markup', async () => {
    const job = await loadJob(await collectInputFiles([join(ROOT, 'fixtures', 'hostile')]));
    const proc = job.processes[0];
    const { job: header, bytes } = buildReport([{ proc }]);
    const names = [...(unpackJob(bytes).job.processes[0].pythonFrames?.frames.values() ?? [])].map((f) => f.function);
    expect(names).toContain('<script>alert(1)</script>');
    expect(names).toContain('"><img src=x onerror=alert(2)>');
    expect(names.some((s) => s.startsWith('step\uFFFD[31m'))).toBe(true);
    expect(JSON.stringify(header)).toContain('<iframe');
    // totals are the original dump's (fixtures/python/jeprof-totals.txt)
    // the hostile copy keeps the original's name (and pid): its jeprof Total is the original's
    const hostileM1 = readdirSync(join(ROOT, 'fixtures', 'hostile')).find((n) => /^jeprof\.\d+\.1\.m1\.heap$/.test(n))!;
    const want = Number(
      new RegExp(`py312/${hostileM1.replaceAll('.', '\\.')} \\S+ Total: (\\d+) B`).exec(
        readFileSync(join(ROOT, 'fixtures/python/jeprof-totals.txt'), 'utf8'),
      )![1],
    );
    const hp = header.processes[0];
    expect(Math.floor(hp.snapshots[hp.target].live.bytes)).toBe(want);
    const html = await buildReportHtml(bytes, META, APP);
    expect(html.match(/<script/g)).toHaveLength(2);
    expect(html).not.toContain('alert(');
    expect(readPayload(extractPayload(html)).job).toEqual(JSON.parse(JSON.stringify(header)));
  });
});

describe('default target', () => {
  it('is the last complete dump: the killed worker of fixtures/job ends on its cut dump, the report targets the one before', async () => {
    const job = await loadJob(await collectInputFiles([resolve(import.meta.dirname, '../../fixtures/job/dumps')], []));
    const { job: header } = buildReport(
      job.processes.map((proc) => ({ proc })),
      { topN: 3 },
    );
    let cut = 0;
    job.processes.forEach((p, i) => {
      const last = p.snapshots.length - 1;
      const expected = p.snapshots[last].complete ? last : last - 1;
      if (!p.snapshots[last].complete) cut++;
      expect(header.processes[i].target, p.key).toBe(expected);
      expect(p.snapshots[header.processes[i].target].complete, p.key).toBe(true);
    });
    expect(cut).toBe(1); // the workload's one SIGKILLed rollout (fixtures/job/expected.json)
  });
});

describe('a pprof delta profile in a report', () => {
  it("its negative values survive the report: the page reads the profile's signed total back", async () => {
    // the Go delta profile (fixtures/go/make-go-delta.sh); go tool pprof -raw's inuse_space summed is the reference
    const dir = join(fixturePath('..'), 'go', 'delta');
    const job = await loadJob(await collectInputFiles([join(dir, 'heap-delta.pb.gz')]));
    const inuse = pprofRawSums(readFileSync(join(dir, 'heap-delta.pprof-raw.txt'), 'utf8')).inuse_space;
    expect(inuse).toBeLessThan(0);
    const { bytes } = buildReport(inputsOf(job.processes), { topN: 3 });
    const back = unpackJob(bytes).job.processes[0];
    expect(back.snapshots[0].live.bytes).toBe(inuse);
    expect(close(liveSum(back, 0), inuse)).toBe(true);
  });
});
