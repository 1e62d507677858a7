// The `killed:` evidence names the cut dump: a name from the file system, so it is shown marked (issue 24
// item 14). Real fixture run (fixtures/jemalloc/job, the "exact" process) ended by a dump cut in its stacks.
import { describe, expect, it } from 'vitest';
import { fixtureFile, fixtureFiles } from '../../tools/fixtures.js';
import { loadJob } from '../load/load-job.js';
import { processFates } from './process-fate.js';
import { processEnds } from './fates.js';
import type { KillEvidence } from './kill-evidence.js';

describe('process fate evidence', () => {
  it('a cut last dump whose name holds a bidi override is named with the override marked', async () => {
    const prefix = 'ex\u202etca';
    const files = fixtureFiles('job')
      .filter((f) => /exact\.\d+\.\d+\.m\d+\.heap$/.test(f.path))
      .map((f) => ({ ...f, path: f.path.replace('exact', prefix) }));
    const pid = /\.(\d+)\./.exec(files[0].path)![1];
    const cut = fixtureFile('damaged/truncated-in-stacks.heap');
    const job = await loadJob([...files, { ...cut, path: `job/${prefix}.${pid}.21.i0.heap` }]);
    const [fate] = processFates(job);
    expect(fate.killed).toBe(true);
    const line = fate.evidence.find((e) => e.includes('is cut off'));
    expect(line).toContain(`ex<U+202E>tca.${pid}.21.i0.heap`);
    expect(line).not.toContain('\u202e');
  });
});

describe('captures beside jemalloc dumps', () => {
  it('a pprof profile, a massif file and a memleak log are never "killed", nor "exited": they have no final dump', async () => {
    const root = (rel: string) => {
      const f = fixtureFile(`../${rel}`);
      return { ...f, path: `job/${rel.split('/').pop()}` };
    };
    // the job's exact process, which wrote its final dump (exact.<pid>.20.f.heap), and three unrelated captures
    const dumps = fixtureFiles('job').filter((f) => /exact\.\d+\.\d+\.(m\d+|f)\.heap$/.test(f.path));
    const job = await loadJob([
      ...dumps,
      root('go/delta/heap-delta.pb.gz'),
      root('massif/massif.out.pages'),
      root('ebpf/memleak.bcc.txt'),
    ]);
    const fates = processFates(job);
    const exact = job.processes.findIndex((p) => p.prefix === 'exact');
    expect(fates[exact].killed).toBe(false);
    expect(job.processes).toHaveLength(4);
    job.processes.forEach((p, i) => {
      if (i === exact) return;
      expect([p.key, fates[i].killed, fates[i].evidence, p.endedWithoutFinalDump]).toEqual([p.key, false, [], false]);
    });
    const none: KillEvidence = {
      kills: [],
      signals: new Map(),
      teardowns: new Map(),
      exits: new Map(),
      unattributed: [],
      cgroup: null,
      logsRead: [],
      clock: null,
      warnings: [],
    };
    const { ends } = processEnds(job, none);
    job.processes.forEach((p, i) => expect([p.key, ends[i].fate]).toEqual([p.key, i === exact ? 'exited' : 'unknown']));
  });
});
