// The report's data and page: totals against jeprof, the known leak on top, CSP and inline-script hashes checked
// with Node's crypto, report → reopen equals, sanitizing, hostile names kept intact as data.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadJob } from '../analysis/load-job.js';
import { collectInputFiles } from '../node-io/node-files.js';
import { NodeSymbolFileSource, readAddr2lineWasm } from '../node-io/symbol-files.js';
import { fixtureFiles, fixturePath, jeprofTotals, jobProcess } from '../tools/fixtures.js';
import { processFrameSource } from '../export/frames.js';
import { Symbolizer } from '../symbolize/symbolize.js';
import { compileAddr2line } from '../symbolize/wasm-addr2line.js';
import { emptySession, type Session } from '../session/schema.js';
import { addNote, createNote, snapshotRef, stackTarget } from '../session/notes.js';
import { buildReportData } from './build-report.js';
import { buildReportHtml, extractReportData } from './html.js';
import { encodePayload, decodePayload, ReportError } from './payload.js';
import { reopenReport, reportToSession } from './reopen.js';
import { flameTree, frameText, notesOnStack } from './viewer/model.js';

const [EXACT, PYGROW, SAMPLED] = ['exact', 'pygrow', 'sampled'].map(jobProcess);

const VIEWER = { js: 'document.getElementById("app").textContent = "viewer";' };
const ROOT = resolve(import.meta.dirname, '..');

async function jobWithSession(): Promise<{ job: Awaited<ReturnType<typeof loadJob>>; session: Session }> {
  const job = await loadJob(await collectInputFiles([fixturePath('job')]));
  const p = job.processes.find((x) => x.prefix === 'exact')!;
  const last = p.snapshots[p.snapshots.length - 1];
  const leak = last.stackIds[[...last.liveBytes].indexOf(20 * 3 * 16384)];
  let session: Session = { ...emptySession('test'), files: [fixturePath('job')], symbols: { dirs: [fixturePath('bin')], sysroot: null, enabled: true } };
  session.selection = { process: p.key, base: snapshotRef(p, 2), target: snapshotRef(p, 12) };
  const t = new Date('2026-11-29T10:00:00Z');
  session = addNote(session, createNote(stackTarget(p, leak, 'make_node'), 'the leak <b>never</b> freed', '#e4572e', t));
  session = addNote(session, createNote({ kind: 'span', process: p.key, from: snapshotRef(p, 3), to: snapshotRef(p, 6) }, 'warm-up', '#2a9d8f', t));
  session = addNote(session, createNote({ kind: 'frame', process: null, function: 'make_node' }, 'allocates', '#f3a712', t));
  return { job, session };
}

describe('report data', () => {
  it('per process, the included stacks plus "other" add up to the snapshot totals, which equal jeprof\'s', async () => {
    const ref = jeprofTotals();
    const job = await loadJob(fixtureFiles('job'));
    const { data } = buildReportData(
      job.processes.map((proc) => ({ proc, frames: processFrameSource(proc) })),
      { topN: 3 },
    );
    for (const p of data.processes) {
      const base = p.snapshots[p.base];
      const target = p.snapshots[p.target];
      expect(p.base).toBe(0);
      expect(p.target).toBe(p.snapshots.length - 1);
      const sumT = p.stacks.reduce((a, s) => a + s.targetBytes, 0) + p.other.targetBytes;
      const sumB = p.stacks.reduce((a, s) => a + s.baseBytes, 0) + p.other.baseBytes;
      expect(Math.abs(sumT - ref.get(target.file)!.inuseSpace)).toBeLessThanOrEqual(1);
      expect(Math.abs(sumB - ref.get(base.file)!.inuseSpace)).toBeLessThanOrEqual(1);
      expect(p.snapshots.map((s) => Math.floor(s.liveBytes))).toEqual(p.snapshots.map((s) => ref.get(s.file)!.inuseSpace));
      // the flame tree's root is the whole snapshot too
      expect(Math.abs(flameTree(data, p).total - sumT)).toBeLessThan(1e-6 * sumT + 1e-6);
      expect(p.stacks.length + p.other.stacks).toBeLessThanOrEqual(p.stackCount);
    }
  });

  it('the exact run\'s steadiest grower is the leak: 3 × 16,384 B per dump, in every interval but the final dump\'s', async () => {
    const job = await loadJob(fixtureFiles('job'));
    const exact = job.processes.find((x) => x.prefix === 'exact')!;
    const { data } = buildReportData([{ proc: exact, frames: processFrameSource(exact) }], { seriesN: 1 });
    const p = data.processes[0];
    const top = [...p.stacks].sort((a, b) => (b.growth?.score ?? 0) - (a.growth?.score ?? 0))[0];
    expect(top.targetBytes).toBe(20 * 3 * 16384);
    expect(top.series).toEqual([...Array.from({ length: 20 }, (_, k) => (k + 1) * 3 * 16384), 20 * 3 * 16384]);
    expect(top.growth!.grew).toBeCloseTo(19 / 20, 12);
    expect(p.stacks.filter((s) => s.series !== null)).toHaveLength(1);
  });

  it('the session\'s selection and notes: base/target from it, noted stacks included with their series', async () => {
    const { job, session } = await jobWithSession();
    const { data } = buildReportData(
      job.processes.map((proc) => ({ proc, frames: processFrameSource(proc) })),
      { session, topN: 0, seriesN: 0 },
    );
    const p = data.processes.find((x) => x.key === session.selection.process)!;
    expect(p.snapshots[p.base].file).toBe(session.selection.base!.file);
    expect(p.snapshots[p.target].file).toBe(session.selection.target!.file);
    // topN 0: the only stack is the noted one
    expect(p.stacks).toHaveLength(1);
    expect(notesOnStack(data.notes, p, p.stacks[0]).map((n) => n.text)).toEqual(['the leak <b>never</b> freed']);
    expect(p.stacks[0].series).toHaveLength(p.snapshots.length);
    expect(data.notes).toEqual(session.notes);
  });
});

describe('report page', () => {
  it('has a CSP allowing only its own inline script and style (by SHA-256), and nothing that loads', async () => {
    const job = await loadJob(fixtureFiles('job'));
    const { data } = buildReportData(job.processes.map((proc) => ({ proc, frames: processFrameSource(proc) })));
    const html = await buildReportHtml(data, VIEWER);
    const csp = /<meta http-equiv="Content-Security-Policy" content="([^"]+)">/.exec(html)![1].replace(/&#39;/g, "'");
    const scripts = [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((m) => m[1]);
    const styles = [...html.matchAll(/<style>([\s\S]*?)<\/style>/g)].map((m) => m[1]);
    expect(scripts).toHaveLength(1);
    expect(styles).toHaveLength(1);
    const sha = (s: string): string => createHash('sha256').update(s, 'utf8').digest('base64');
    expect(csp).toBe(`default-src 'none'; script-src 'sha256-${sha(scripts[0])}'; style-src 'sha256-${sha(styles[0])}'; img-src data:; base-uri 'none'; form-action 'none'`);
    expect(html).not.toMatch(/\s(src|href)=/i);
    expect(html).not.toMatch(/@import|url\(/i);
    // the data element is inert: a non-JavaScript type, base64 only
    const m = /<script id="heaplens-report-data" type="application\/x-heaplens-report">([^<]*)<\/script>/.exec(html)!;
    expect(m[1]).toMatch(/^[A-Za-z0-9+/=]+$/);
  });

  it('an inline script containing "</script" cannot end its element early', async () => {
    const job = await loadJob(fixtureFiles('job'));
    const { data } = buildReportData([{ proc: job.processes[0], frames: processFrameSource(job.processes[0]) }]);
    const html = await buildReportHtml(data, { js: 'var s = "</script><img src=x onerror=alert(1)>";' });
    expect(html.match(/<\/script>/g)).toHaveLength(2);
    expect(html).toContain('var s = "<\\/script><img src=x onerror=alert(1)>";');
  });

  it('report → reopen equals: the embedded data, and a read-only session with the notes', async () => {
    const { job, session } = await jobWithSession();
    const { data } = buildReportData(job.processes.map((proc) => ({ proc, frames: processFrameSource(proc) })), { session, title: 'leak in <exact>' });
    const html = await buildReportHtml(data, VIEWER);
    expect(html).toContain('<title>leak in &lt;exact&gt;</title>');
    const back = reopenReport(html);
    expect(back.data).toEqual(JSON.parse(JSON.stringify(data)));
    expect(back.session.readOnly).toBe(true);
    expect(back.session.source).toEqual({ kind: 'report', title: 'leak in <exact>', createdAt: data.createdAt });
    expect(back.session.notes).toEqual(session.notes);
    expect(back.session.selection).toEqual(session.selection);
    expect(back.session.files).toEqual(session.files);
  });

  it('damaged, foreign or newer reports are refused with a clear message', async () => {
    expect(() => extractReportData('<html><body>hello</body></html>')).toThrow(ReportError);
    const job = await loadJob(fixtureFiles('job'));
    const { data } = buildReportData([{ proc: job.processes[0], frames: processFrameSource(job.processes[0]) }]);
    const html = await buildReportHtml(data, VIEWER);
    expect(() => extractReportData(html.replace(/(id="heaplens-report-data"[^>]*>)([A-Za-z0-9+/]{40})/, '$1$2!!'))).toThrow(/damaged/);
    expect(() => extractReportData(html.slice(0, html.indexOf('heaplens-report-data') + 200))).toThrow(/cut off/);
    expect(() => decodePayload(encodePayload({ ...data, version: 2 }))).toThrow('written by a newer heaplens (report version 2); this one reads up to 1');
    // structurally damaged data (an index out of range, a wrong type) is refused naming the field
    const bad = structuredClone(data);
    bad.processes[0].stacks[0].frames[0] = 99999;
    expect(() => decodePayload(encodePayload(bad))).toThrow(/processes\[0\]\.stacks\[0\]\.frames\[0\]: expected an index below/);
    const bad2 = JSON.parse(JSON.stringify(data));
    bad2.processes[0].frames[0].lines[0][0] = '<b>';
    expect(() => decodePayload(encodePayload(bad2))).toThrow(/processes\[0\]\.frames\[0\]\.lines\[0\]\[0\]/);
    // a session embedded with bad fields is refused as untrusted input
    expect(() => reportToSession({ ...data, notes: [{ ...(data.notes[0] ?? {}), color: 'javascript:x' } as never] })).toThrow();
  });
});

describe('sanitize', () => {
  it('strips every directory (dumps, processes, sources, session paths), drops the maps, and previews exactly that', async () => {
    const { job, session } = await jobWithSession();
    const wasm = await compileAddr2line(await readAddr2lineWasm());
    const sym = new Symbolizer(new NodeSymbolFileSource(), { wasm, symbolDirs: [fixturePath('bin')], hostPaths: false });
    const inputs = [];
    for (const proc of job.processes) inputs.push({ proc, frames: processFrameSource(proc, { symbols: await sym.symbolizeProcess(proc) }) });
    await sym.dispose();
    const plain = buildReportData(inputs, { session }).data;
    // unsanitized, the source files are absolute paths (DWARF) and the maps are there
    expect(plain.strings).toContain('./leaky.c');
    expect(plain.processes.every((p) => p.maps !== null && p.maps.length > 0)).toBe(true);
    const { data, preview } = buildReportData(inputs, { session, sanitize: { paths: true, maps: true }, warnings: [{ file: '/secret/dir/x.heap', message: 'could not read /secret/dir/x.heap: EACCES' }] });
    const json = JSON.stringify(data);
    expect(json).not.toContain(ROOT);
    expect(json).not.toContain('/secret/');
    expect(data.strings.filter((s) => s.includes('/'))).toEqual([]);
    expect(data.processes.map((p) => p.key).sort()).toEqual([EXACT, PYGROW, SAMPLED]);
    expect(data.processes.every((p) => p.maps === null && p.snapshots.every((s) => !s.file.includes('/')))).toBe(true);
    expect(data.session.files).toEqual(['job']);
    expect(data.warnings).toEqual([{ file: 'x.heap', message: 'could not read x.heap: EACCES' }]);
    // the preview lists what goes: each path and its replacement, the maps per process
    expect(preview.paths).toContainEqual({ from: `job/${EXACT}`, to: EXACT });
    expect(preview.paths).toContainEqual({ from: fixturePath('job'), to: 'job' });
    expect(preview.paths).toContainEqual({ from: './leaky.c', to: 'leaky.c' });
    expect(preview.maps.map((m) => m.process).sort()).toEqual([EXACT, PYGROW, SAMPLED]);
    expect(preview.maps.every((m) => m.mappings > 0)).toBe(true);
    for (const x of preview.paths) expect(json).not.toContain(JSON.stringify(x.from));
    // notes still point at their stack and process after renaming
    const p = data.processes.find((x) => x.key === EXACT)!;
    expect(p.stacks.some((s) => notesOnStack(data.notes, p, s).length === 1)).toBe(true);
    expect(data.session.selection.process).toBe(EXACT);
  });

  it('process keys that collide once shortened stay distinct', async () => {
    const a = await loadJob(await collectInputFiles([fixturePath('job')]));
    const b = await loadJob(await collectInputFiles([fixturePath('job')]));
    const pa = a.processes[0];
    const pb = { ...b.processes[0], key: 'node2/' + b.processes[0].key };
    const { data } = buildReportData([{ proc: pa, frames: processFrameSource(pa) }, { proc: pb, frames: processFrameSource(pb) }], { sanitize: { paths: true } });
    expect(data.processes.map((p) => p.key)).toEqual([EXACT, `${EXACT}~2`]);
  });
});

describe('hostile names', () => {
  it('reach the report as data, unchanged (control characters already replaced by the reader); the page has only its own markup', async () => {
    const job = await loadJob(await collectInputFiles([join(ROOT, 'fixtures', 'hostile')]));
    const proc = job.processes[0];
    const { data } = buildReportData([{ proc, frames: processFrameSource(proc) }]);
    expect(data.strings).toContain('<script>alert(1)</script>');
    expect(data.strings).toContain('"><img src=x onerror=alert(2)>');
    expect(data.strings.some((s) => s.startsWith('step\uFFFD[31m'))).toBe(true);
    expect(data.strings.some((s) => s.includes('<iframe'))).toBe(true);
    const p = data.processes[0];
    expect(p.stacks.some((s) => s.frames.some((f) => frameText(data, p.frames[f]).startsWith('[py] <script>alert(1)</script> (x.py:')))).toBe(true);
    // totals are the original dump's (fixtures/python/jeprof-totals.txt)
    // the hostile copy keeps the original's name (and pid): its jeprof Total is the original's
    const hostileM1 = readdirSync(join(ROOT, 'fixtures', 'hostile')).find((n) => /^jeprof\.\d+\.1\.m1\.heap$/.test(n))!;
    const want = Number(new RegExp(`py312/${hostileM1.replaceAll('.', '\\.')} \\S+ Total: (\\d+) B`).exec(readFileSync(join(ROOT, 'fixtures/python/jeprof-totals.txt'), 'utf8'))![1]);
    expect(Math.floor(p.snapshots[p.target].liveBytes)).toBe(want);
    const html = await buildReportHtml(data, VIEWER);
    expect(html.match(/<script/g)).toHaveLength(2);
    expect(html).not.toContain('alert(');
    expect(extractReportData(html)).toEqual(JSON.parse(JSON.stringify(data)));
  });
});
