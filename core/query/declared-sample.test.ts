// The app's worker counts a declared sample type (issue 21 item 1): a flame graph of fixtures/go/extra-types
// (a real Go profile with `samples/count` and `freed_space/bytes` added by its script) totals what
// `go tool pprof -top -unit=B -sample_index=NAME` reads from the same file, and a name no profile declares is an
// error naming the declared ones.
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadJob } from '../load/load-job.js';
import type { Job } from '../model/model.js';
import { nodeInputFile } from '../../node/io/node-files.js';
import { FIXTURES } from '../../tools/fixtures.js';
import { QuerySession } from './session.js';
import { flameTree } from './flame.js';
import { jobSummary } from './job-summary.js';

const DIR = join(FIXTURES, '..', 'go', 'extra-types');
const pprofTotal = (t: string): number =>
  Number(/ of (\d+)B total$/m.exec(readFileSync(join(DIR, `extra.pprof-top.${t}.txt`), 'utf8'))![1]);

let job: Job;
beforeAll(async () => {
  const path = join(DIR, 'extra.pb.gz');
  job = await loadJob([nodeInputFile(path, path, statSync(path).size, statSync(path).mtimeMs)]);
});

describe('a declared sample type in the query layer', () => {
  it('the summary lists the declared types with their units', () => {
    expect(
      jobSummary(job, { hasPython: () => false, loadMs: 0, waitMs: 0, bytesTotal: 0, partial: false }).declaredSamples,
    ).toEqual([
      { type: 'samples', unit: 'count' },
      { type: 'freed_space', unit: 'bytes' },
    ]);
  });

  for (const t of ['samples', 'freed_space', 'inuse_space'])
    it(`the flame graph of ${t} totals go tool pprof's`, () => {
      const s = new QuerySession();
      s.open(job);
      const view = { mode: 'native' as const, hideAllocator: false, sample: t };
      expect(flameTree(s, { proc: 0, snapshot: 0, base: null, view }).flame.targetGrand).toBe(pprofTotal(t));
    });

  it('an undeclared name says which the profiles declare', () => {
    const s = new QuerySession();
    s.open(job);
    const view = { mode: 'native' as const, hideAllocator: false, sample: 'tlab' };
    expect(() => flameTree(s, { proc: 0, snapshot: 0, base: null, view })).toThrow(
      /do not declare the sample type tlab \(they declare samples, freed_space beyond the four\)/,
    );
  });
});
