// pprof's default_sample_type decides what every command counts when --sample is not given: Go's `allocs` profile
// (fixtures/go/make-go-leak-series.sh) asks for alloc_space, as `go tool pprof -top` shows it (Type: alloc_space,
// stored beside it); totals from go tool pprof -raw of the same file. A job mixing it with a jemalloc dump keeps
// inuse_space: one process's default must not hide another's live bytes.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FIXTURES, pprofRawSums } from '../../tools/fixtures.js';
import { runCaptured } from './run-captured.js';

const ALLOCS = join(FIXTURES, '..', 'go', 'allocs');
/** go tool pprof -raw: each sample type's total, by name */
const rawSums = (name: string) => pprofRawSums(readFileSync(join(ALLOCS, `${name}.pprof-raw.txt`), 'utf8'));
const raw = rawSums('allocs');
/** (alloc_objects alloc_space inuse_objects inuse_space) */
const rawTotals = [raw.alloc_objects, raw.alloc_space, raw.inuse_objects, raw.inuse_space];

interface TopJson {
  processes: { sample: string; total: number }[];
}

describe("the profiles' default sample type", () => {
  it('is what go tool pprof shows first', () => {
    expect(readFileSync(join(ALLOCS, 'allocs.pprof-top.txt'), 'utf8')).toMatch(/^Type: alloc_space$/m);
  });

  it('top counts alloc_space without --sample, with a note; --sample inuse_space still chooses', async () => {
    const r = await runCaptured('top', join(ALLOCS, 'allocs.pb.gz'), '--no-symbols', '-n', '1');
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^ {2}snapshot - \(unknown\) .*allocs\.pb\.gz: [\d.]+ MiB alloc_space$/m);
    expect(r.err + r.out).toMatch(/values are alloc_space, the profiles' default_sample_type/);
    const total = async (...more: string[]) => {
      const j = await runCaptured('top', join(ALLOCS, 'allocs.pb.gz'), '--no-symbols', '--json', ...more);
      const p = (JSON.parse(j.out) as TopJson).processes[0];
      return [p.sample, p.total];
    };
    expect(await total()).toEqual(['alloc_space', rawTotals[1]]);
    expect(await total('--sample', 'inuse_space')).toEqual(['inuse_space', rawTotals[3]]);
    expect(await total('--sample', 'alloc_objects')).toEqual(['alloc_objects', rawTotals[0]]);
  });

  it('growth ranks live bytes and says nothing of the default (alloc_space only ever grows)', async () => {
    const r = await runCaptured('growth', join(ALLOCS, 'allocs.pb.gz'), '--no-symbols', '--json');
    expect(r.code).toBe(0);
    expect(r.err + r.out).not.toMatch(/default_sample_type/);
  });

  // a memory post-mortem is about what was live at the end: alloc_space counts every byte ever allocated
  it('postmortem reads live bytes, as growth does, and says nothing of the default', async () => {
    const r = await runCaptured('postmortem', join(ALLOCS, 'allocs.pb.gz'), '--no-symbols');
    expect(r.code).toBe(0);
    expect(r.err + r.out).not.toMatch(/default_sample_type/);
    const j = await runCaptured('postmortem', join(ALLOCS, 'allocs.pb.gz'), '--no-symbols', '--json');
    const doc = JSON.parse(j.out) as { processes: { lastCompleteBytes: number }[]; warnings: unknown[] };
    expect(doc.processes[0].lastCompleteBytes).toBe(raw.inuse_space);
    expect(raw.inuse_space).toBeLessThan(raw.alloc_space);
    expect(JSON.stringify(doc.warnings)).not.toMatch(/default_sample_type/);
    // --sample still chooses
    const a = await runCaptured(
      'postmortem',
      join(ALLOCS, 'allocs.pb.gz'),
      '--no-symbols',
      '--json',
      '--sample',
      'alloc_space',
    );
    expect((JSON.parse(a.out) as typeof doc).processes[0].lastCompleteBytes).toBe(raw.alloc_space);
  });

  it('a profile with no live bytes (alloc_objects only): growth and postmortem read its default, and say so', async () => {
    const only = rawSums('alloc-objects-only');
    expect(Object.keys(only)).toEqual(['alloc_objects']);
    const note = "values are alloc_objects, the profiles' default_sample_type (they record no live bytes)";
    const pm = await runCaptured('postmortem', join(ALLOCS, 'alloc-objects-only.pb.gz'), '--no-symbols', '--json');
    expect(pm.code).toBe(0);
    const doc = JSON.parse(pm.out) as { processes: { lastCompleteBytes: number }[]; warnings: { message: string }[] };
    expect(doc.processes[0].lastCompleteBytes).toBe(only.alloc_objects);
    expect(doc.warnings.map((w) => w.message)).toContain(note);
    const g = await runCaptured('growth', join(ALLOCS, 'alloc-objects-only.pb.gz'), '--no-symbols');
    expect(g.code).toBe(0);
    expect(g.err).toContain(note);
  });

  it('a job that mixes it with a jemalloc dump counts inuse_space', async () => {
    const r = await runCaptured(
      'summary',
      join(ALLOCS, 'allocs.pb.gz'),
      join(FIXTURES, 'job', 'exact.21459.20.f.heap'),
      '--json',
    );
    expect(r.code).toBe(0);
    expect(r.out).not.toMatch(/default_sample_type/);
  });
});
