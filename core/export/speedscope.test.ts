// speedscope export: structure checked against the fields the file-format spec requires
// (jlfwong/speedscope src/lib/file-format-spec.ts, schema https://www.speedscope.app/file-format-schema.json),
// weights summed against jeprof's totals.
import { describe, expect, it } from 'vitest';
import { loadJob } from '../load/load-job.js';
import { fixtureFiles, jeprofTotals } from '../../tools/fixtures.js';
import { DEFAULT_VIEW, viewSource } from '../frames/view.js';
import { SPEEDSCOPE_SCHEMA, toSpeedscope } from './speedscope.js';

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

/** Validates a parsed file against the spec's required fields and types; returns the problems found. */
function validateSpeedscope(doc: Json): string[] {
  const p: string[] = [];
  const isObj = (v: Json | undefined): v is { [k: string]: Json } =>
    typeof v === 'object' && v !== null && !Array.isArray(v);
  if (!isObj(doc)) return ['not an object'];
  if (doc.$schema !== SPEEDSCOPE_SCHEMA) p.push('$schema');
  const shared = doc.shared;
  if (!isObj(shared) || !Array.isArray(shared.frames)) return [...p, 'shared.frames'];
  const nFrames = shared.frames.length;
  shared.frames.forEach((f, i) => {
    if (!isObj(f) || typeof f.name !== 'string') p.push(`frames[${i}].name`);
    else {
      if (f.file !== undefined && typeof f.file !== 'string') p.push(`frames[${i}].file`);
      if (f.line !== undefined && typeof f.line !== 'number') p.push(`frames[${i}].line`);
    }
  });
  if (!Array.isArray(doc.profiles) || doc.profiles.length === 0) return [...p, 'profiles'];
  if (
    doc.activeProfileIndex !== undefined &&
    (typeof doc.activeProfileIndex !== 'number' || doc.activeProfileIndex >= doc.profiles.length)
  )
    p.push('activeProfileIndex');
  doc.profiles.forEach((pr, i) => {
    if (!isObj(pr)) return p.push(`profiles[${i}]`);
    if (pr.type !== 'sampled') p.push(`profiles[${i}].type`);
    if (typeof pr.name !== 'string') p.push(`profiles[${i}].name`);
    if (!['none', 'nanoseconds', 'microseconds', 'milliseconds', 'seconds', 'bytes'].includes(String(pr.unit)))
      p.push(`profiles[${i}].unit`);
    if (typeof pr.startValue !== 'number' || typeof pr.endValue !== 'number' || pr.endValue < pr.startValue)
      p.push(`profiles[${i}].start/endValue`);
    if (!Array.isArray(pr.samples) || !Array.isArray(pr.weights) || pr.samples.length !== pr.weights.length)
      return p.push(`profiles[${i}].samples/weights`);
    pr.samples.forEach((s, j) => {
      if (!Array.isArray(s) || s.some((x) => typeof x !== 'number' || !Number.isInteger(x) || x < 0 || x >= nFrames))
        p.push(`profiles[${i}].samples[${j}]`);
    });
    if (pr.weights.some((w) => typeof w !== 'number' || w < 0)) p.push(`profiles[${i}].weights`);
    return undefined;
  });
  return p;
}

describe('speedscope export', () => {
  it("has the spec's required fields; weights sum to jeprof's totals; endValue is the total", async () => {
    const ref = jeprofTotals();
    const job = await loadJob(fixtureFiles('job'));
    const inputs = job.processes.map((p) => ({
      proc: p,
      snapshotIndex: p.snapshots.length - 1,
      frames: viewSource(p, DEFAULT_VIEW),
    }));
    const doc = JSON.parse(JSON.stringify(toSpeedscope(inputs))) as Json;
    expect(validateSpeedscope(doc)).toEqual([]);
    const file = toSpeedscope(inputs);
    expect(file.profiles).toHaveLength(job.processes.length);
    file.profiles.forEach((pr, i) => {
      const want = ref.get(job.processes[i].snapshots[job.processes[i].snapshots.length - 1].file)!.inuseSpace;
      const sum = pr.weights.reduce((a, b) => a + b, 0);
      expect(Math.abs(sum - want)).toBeLessThanOrEqual(1);
      expect(pr.endValue).toBe(sum);
      expect(pr.unit).toBe('bytes');
    });
  });

  it('the validator rejects what the spec forbids (so the check above can fail)', () => {
    expect(
      validateSpeedscope({
        $schema: SPEEDSCOPE_SCHEMA,
        shared: { frames: [{ name: 'a' }] },
        profiles: [
          { type: 'sampled', name: 'x', unit: 'bytes', startValue: 0, endValue: 1, samples: [[1]], weights: [1] },
        ],
      }),
    ).toEqual(['profiles[0].samples[0]']);
    expect(
      validateSpeedscope({
        $schema: SPEEDSCOPE_SCHEMA,
        shared: { frames: [] },
        profiles: [{ type: 'sampled', name: 'x', unit: 'kg', startValue: 0, endValue: 1, samples: [], weights: [1] }],
      }),
    ).toContain('profiles[0].unit');
  });

  it("stacks are root first: the leak stack's last frame is its leaf", async () => {
    const job = await loadJob(fixtureFiles('job'));
    const p = job.processes.find((x) => x.prefix === 'exact')!;
    const frames = viewSource(p, DEFAULT_VIEW);
    const file = toSpeedscope([{ proc: p, snapshotIndex: p.snapshots.length - 1, frames }]);
    const pr = file.profiles[0];
    const k = pr.weights.indexOf(20 * 3 * 16384);
    const s = p.snapshots[p.snapshots.length - 1];
    const id = s.stackIds[[...s.liveBytes].indexOf(20 * 3 * 16384)];
    const leaf = frames.frames(id).find((f) => f.kind !== 'allocator')!;
    expect(file.shared.frames[pr.samples[k][pr.samples[k].length - 1]].name).toBe(
      `${leaf.module}+${leaf.moduleOffset}`,
    );
  });
});
