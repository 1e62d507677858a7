// The `killed:` evidence names the cut dump: a name from the file system, so it is shown marked (issue 24
// item 14). Real fixture run (fixtures/jemalloc/job, the "exact" process) ended by a dump cut in its stacks.
import { describe, expect, it } from 'vitest';
import { fixtureFile, fixtureFiles } from '../../tools/fixtures.js';
import { loadJob } from '../load/load-job.js';
import { processFates } from './process-fate.js';

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
