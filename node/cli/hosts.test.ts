// Hosts (issue 49 item 1): a job copied off two "nodes" as node-a/ and node-b/, the same real dumps on each (so
// every pid repeats, as pids do across nodes and containers). The expected hosts come from how the job is made
// here: the folder names, or the hostname written into the contexts of node-b's copy (the capture library records
// the UTS hostname; the fixture's run had `vm`, replaced here as a second node's `hostname node-b` would).
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCaptured, runJson } from './run-captured.js';
import { findReportApp } from './commands/report.js';
import { copyCapturedAsHost } from '../../tools/fixtures.js';
import { reopenReport } from '../../core/report/reopen.js';
import { labelHost, processHost } from '../../core/model/process-host.js';
import { processLabel, processName } from '../../core/model/process-name.js';

const FIXTURES = resolve(import.meta.dirname, '../../fixtures');
// real jemalloc dumps without capture contexts: three processes (fixtures/jemalloc/make-jemalloc-fixtures.sh)
const PLAIN = join(FIXTURES, 'jemalloc/job');
// a real capture-library job: five processes, contexts with hostname `vm` (fixtures/job/make-job-fixture.sh)
const CAPTURED = join(FIXTURES, 'job/dumps');
const expected = JSON.parse(readFileSync(join(FIXTURES, 'job/expected.json'), 'utf8')) as {
  processes: { pid: number; role: string }[];
};
const plainPids = [...new Set(readdirSync(PLAIN).map((f) => Number(/\.(\d+)\.\d+\.[mfi]/.exec(f)?.[1])))].sort();

let dir = '';
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'heaplens-hosts-'));
  for (const node of ['node-a', 'node-b']) cpSync(PLAIN, join(dir, 'plain', node), { recursive: true });
  for (const [node, host] of [
    ['node-a', 'gpu-a'],
    ['node-b', 'gpu-b'],
  ]) {
    copyCapturedAsHost(join(dir, 'captured', node), host);
  }
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface ProcessJson {
  key: string;
  pid: number | null;
  host: string | null;
}

describe('hosts of a job from two nodes', () => {
  it('keeps the same pid on two nodes apart, each with the folder it came from as its host', async () => {
    const j = await runJson<{ processes: ProcessJson[] }>('summary', '--json', join(dir, 'plain'));
    const got = j.processes.map((p) => `${p.host}:${p.pid}`).sort();
    const want = ['node-a', 'node-b'].flatMap((h) => plainPids.map((pid) => `${h}:${pid}`)).sort();
    expect(got).toEqual(want);
  });

  it("takes the context's hostname before the folder", async () => {
    const j = await runJson<{ processes: ProcessJson[] }>('summary', '--json', join(dir, 'captured'));
    const got = j.processes.map((p) => `${p.host}:${p.pid}`).sort();
    const want = ['gpu-a', 'gpu-b'].flatMap((h) => expected.processes.map((p) => `${h}:${p.pid}`)).sort();
    expect(got).toEqual(want);
  });

  it('labels processes host:pid in text where pids repeat, and --pid takes host:pid', async () => {
    const r = await runCaptured('summary', join(dir, 'plain'));
    expect(r.code).toBe(0);
    const titles = r.out.split('\n').filter((l) => l.startsWith('pid '));
    expect(titles).toHaveLength(2 * plainPids.length);
    for (const h of ['node-a', 'node-b'])
      for (const pid of plainPids) expect(titles.some((t) => t.startsWith(`pid ${h}:${pid} `))).toBe(true);
    const one = await runJson<{ processes: ProcessJson[] }>(
      'summary',
      '--json',
      '--pid',
      `node-b:${plainPids[0]}`,
      join(dir, 'plain'),
    );
    expect(one.processes.map((p) => `${p.host}:${p.pid}`)).toEqual([`node-b:${plainPids[0]}`]);
  });

  it('gives host beside pid in growth and postmortem JSON: stacks, groups and their holders, culprits', async () => {
    const g = await runJson<{
      processes: ProcessJson[];
      stacks: { pid: number; host: string | null; process: string }[];
      groups: { processes: number[]; hosts: (string | null)[]; top: { pid: number; host: string | null } }[];
    }>('growth', '--json', '-n', '5', join(dir, 'captured'));
    const hostOfKey = new Map(g.processes.map((p) => [p.key, p.host]));
    expect(g.stacks.length).toBeGreaterThan(0);
    for (const s of g.stacks) expect(s.host).toBe(hostOfKey.get(s.process));
    expect(g.groups.length).toBeGreaterThan(0);
    for (const grp of g.groups) {
      expect(grp.hosts).toHaveLength(grp.processes.length);
      // the same stack on both nodes: its holders are the pids of both, each with its own host
      expect(new Set(grp.hosts)).toEqual(new Set(['gpu-a', 'gpu-b']));
      expect(['gpu-a', 'gpu-b']).toContain(grp.top.host);
    }
    const pm = await runJson<{
      processes: ProcessJson[];
      culprits: { pids: (number | null)[]; hosts: (string | null)[] }[];
      kills: { pid: number | null; host: string | null }[];
    }>('postmortem', '--json', join(dir, 'captured'));
    expect(pm.processes.map((p) => `${p.host}:${p.pid}`).sort()).toEqual(
      ['gpu-a', 'gpu-b'].flatMap((h) => expected.processes.map((p) => `${h}:${p.pid}`)).sort(),
    );
    expect(pm.culprits.length).toBeGreaterThan(0);
    for (const c of pm.culprits) {
      expect(c.hosts).toHaveLength(c.pids.length);
      for (const h of c.hosts) expect(['gpu-a', 'gpu-b']).toContain(h);
    }
    for (const k of pm.kills) expect(k).toHaveProperty('host');
  });

  it('a folded export of both nodes names each process host:pid, so the two are not summed as one', async () => {
    const r = await runCaptured('export', '--format', 'folded', '-o', '-', '--no-symbols', join(dir, 'plain'));
    expect(r.code, r.err).toBe(0);
    const roots = new Set(r.out.split('\n').map((l) => l.split(';')[0]));
    const want = ['node-a', 'node-b'].flatMap((h) => plainPids.map((pid) => `${h}:${pid}`));
    for (const w of want) expect([...roots].some((root) => root.endsWith(` ${w}`))).toBe(true);
  });

  it('a report keeps the hosts, and its labels say host:pid', async () => {
    // `npm run build` makes the report page (postbuild); build it here when the tests run on their own
    const root = resolve(import.meta.dirname, '../..');
    if (!findReportApp())
      execFileSync(
        process.execPath,
        [join(root, 'node_modules/vite/bin/vite.js'), 'build', '-c', 'vite.report.config.ts'],
        { cwd: root, stdio: 'ignore' },
      );
    const out = join(dir, 'plain.html');
    const r = await runCaptured('report', join(dir, 'plain'), '-o', out, '--no-symbols');
    expect(r.code, r.err).toBe(0);
    const { job } = reopenReport(readFileSync(out, 'utf8'));
    const got = job.processes.map((p) => `${processHost(p)}:${p.pid}`).sort();
    expect(got).toEqual(['node-a', 'node-b'].flatMap((h) => plainPids.map((pid) => `${h}:${pid}`)).sort());
    for (const p of job.processes)
      expect(processLabel(p, processName(p), labelHost(job.processes, p))).toMatch(
        new RegExp(`^${processHost(p)}:${p.pid}\\b`),
      );
  }, 120_000);

  it('names no host for one folder of dumps, and labels by pid alone where pids do not repeat', async () => {
    const plain = await runJson<{ processes: ProcessJson[] }>('summary', '--json', PLAIN);
    expect(plain.processes.map((p) => p.host)).toEqual(plainPids.map(() => null));
    const one = await runCaptured('summary', CAPTURED);
    const titles = one.out.split('\n').filter((l) => l.startsWith('pid '));
    expect(titles.map((t) => Number(/^pid (\d+) /.exec(t)?.[1])).sort()).toEqual(
      expected.processes.map((p) => p.pid).sort(),
    );
    const j = await runJson<{ processes: ProcessJson[] }>('summary', '--json', CAPTURED);
    expect(new Set(j.processes.map((p) => p.host))).toEqual(new Set(['vm']));
  });
});
