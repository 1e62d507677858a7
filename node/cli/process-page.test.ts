// `growth` and `postmortem` on a job of many processes (issue 49 item 4): a generated job of 60 processes on 3
// hosts (bench/generate-series.mjs), every process growing two stacks, processes 0, 20 and 40 — pid 1000 on each
// host — ten times as fast (`outliers`). The default text fits a page: at most 400 lines, the culprit's call site
// in the first 25, the fast processes listed by name and the rest counted by host; --all lists every process;
// --json keeps every process and adds the groups. The culprit's call site is read here from the generated files
// (the stack's first Python address, named by the sidecar's F line), not from our output.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCapturedAt, runJson } from './run-captured.js';

const PROCESSES = 60;
const HOSTS = 3;
const STACKS = 40;
const GROWING = 2;
const HOSTNAMES = ['node-00', 'node-01', 'node-02'];
const FAST = HOSTNAMES.map((h) => `${h}:1000`);
const MAX_LINES = 400;

let dir = '';
/** the call sites (`fn (file:line)`) of the fast processes' growing stacks, from the generated files */
let growingSites: string[] = [];

/** Stack i's leaf-most Python frame in a generated dump, as `function (file:line)` from its sidecar. */
function pythonSite(dump: string, stack: number): string {
  const stacks = readFileSync(dump, 'utf8')
    .split('\n')
    .filter((l) => l.startsWith('@ '));
  const addr = stacks[stack]
    .slice(2)
    .split(' ')
    .find((a) => a.startsWith('0x70791'));
  const table = readFileSync(`${dump}.pyframes`, 'utf8');
  const m = new RegExp(`^F ${addr} (\\d+) \\d+ (\\S+) (\\S+)$`, 'm').exec(table)!;
  return `${m[2]} (${m[3].split('/').pop()}:${m[1]})`;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'heaplens-page-'));
  const generator = '../../bench/generate-series.mjs';
  const mod: unknown = await import(/* @vite-ignore */ generator);
  const { writeSeries } = mod as { writeSeries: (d: string, o: object) => number };
  writeSeries(dir, {
    processes: PROCESSES,
    snapshots: 6,
    stacks: STACKS,
    deep: true,
    hosts: HOSTS,
    growing: GROWING,
    outliers: HOSTS,
  });
  // the generator's growing stacks: 0 and STACKS / GROWING (the same frames for pid 1000 on every host)
  const dump = join(dir, 'node-00', 'jeprof.1000.5.i5.heap');
  growingSites = [0, STACKS / GROWING].map((i) => pythonSite(dump, i));
}, 60_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function text(...argv: string[]): Promise<string[]> {
  const r = await runCapturedAt(120, ...argv);
  expect(r.code, r.err).toBe(0);
  return r.out.split('\n');
}

describe.each(['growth', 'postmortem'])('heaplens %s on 60 processes over 3 hosts', (command) => {
  it('fits a page: the culprit’s call site first, the fast processes by name, the rest counted by host', async () => {
    const lines = await text(command, dir);
    expect(lines.length).toBeLessThanOrEqual(MAX_LINES);
    const at = lines.findIndex((l) => growingSites.some((s) => l.includes(s)));
    expect(at, lines.slice(0, 25).join('\n')).toBeGreaterThanOrEqual(0);
    expect(at).toBeLessThan(25);
    const all = lines.join('\n');
    // each fast process is listed on its own (an outlier of growth, or a top holder of the first suspect)
    for (const p of FAST)
      expect(all).toMatch(new RegExp(`^\\[(?:[a-z ]+, )*(?:outlier|top holder)[a-z ,]*\\] pid ${p} `, 'm'));
    // the others are counted by host: 20 a host less those listed
    const listed = [...all.matchAll(/^(?:\[[a-z ,]+\] )?pid (node-\d+):\d+ /gm)].map((m) => m[1]);
    for (const h of HOSTNAMES) {
      const row = lines.find((l) => new RegExp(`^\\s+${h}\\s+python3\\.12 train\\.py\\s+\\S+\\s+\\d+`).test(l));
      expect(row, h).toBeDefined();
      expect(Number(/\s(\d+)\s+\S+ [KMG]?i?B\s+\S+ [KMG]?i?B$/.exec(row!)?.[1])).toBe(
        PROCESSES / HOSTS - listed.filter((x) => x === h).length,
      );
    }
    expect(all).toMatch(/--all lists every process/);
  });

  it('--all lists every process', async () => {
    const all = (await text(command, dir, '--all')).join('\n');
    expect([...all.matchAll(/^pid node-\d+:\d+ /gm)]).toHaveLength(PROCESSES);
  });
});

describe('--json keeps every process and adds the groups', () => {
  it.each(['growth', 'postmortem'])('%s --json', async (command) => {
    const j = await runJson<{
      processes: { pid: number; host: string }[];
      processGroups: { host: string; command: string; processes: { pid: number; host: string }[] }[];
      processesThatMatter: { pid: number; host: string; reasons: string[] }[];
    }>(command, '--json', dir);
    expect(j.processes).toHaveLength(PROCESSES);
    expect(j.processGroups.map((g) => [g.host, g.command, g.processes.length])).toEqual(
      HOSTNAMES.map((h) => [h, 'python3.12 train.py', PROCESSES / HOSTS]),
    );
    for (const g of j.processGroups) for (const p of g.processes) expect(p.host).toBe(g.host);
    const outliers = j.processesThatMatter
      .filter((p) => p.reasons.includes('outlier'))
      .map((p) => `${p.host}:${p.pid}`);
    expect(outliers.sort()).toEqual(FAST);
  });
});
