// The one row key (core/query/row-key.ts): two stacks are one row exactly when their shown frames are the same list,
// for the listings (shown frames at a granularity) and the app's Growth table (its frame catalog's keys) alike,
// checked against the plain definition (the frames' texts joined) over every stack of fixtures/job.
import { beforeAll, describe, expect, it } from 'vitest';
import type { Frame } from '../frames/describe.js';
import { FrameCatalog } from '../frames/catalog.js';
import { atGranularity, frameKey, type Granularity } from '../frames/stack-filter.js';
import { processViewer } from '../frames/view.js';
import { loadJob } from '../load/load-job.js';
import type { Job } from '../model/model.js';
import type { ViewOptions } from '../model/vocab.js';
import type { RowKey } from './rows.js';
import { catalogParts, listingRowKey, sameFramesKey } from './row-key.js';
import { jobFiles } from '../../fixtures/job/job-fixture.js';

let job: Job;
beforeAll(async () => {
  job = await loadJob(jobFiles());
}, 120_000);

/** Every stack's key and its plain one agree: equal keys exactly for equal plain keys, null for the same stacks. */
function partition(stacks: number, key: RowKey, plain: (id: number) => string | null): number {
  const plainOf = new Map<string, string>();
  const keyOf = new Map<string, string>();
  for (let id = 0; id < stacks; id++) {
    const k = key(id);
    const p = plain(id);
    expect(k === null, `stack ${id} dropped`).toBe(p === null);
    if (k === null || p === null) continue;
    expect(plainOf.get(k) ?? p, `stack ${id}: one key, two frame lists`).toBe(p);
    expect(keyOf.get(p) ?? k, `stack ${id}: one frame list, two keys`).toBe(k);
    plainOf.set(k, p);
    keyOf.set(p, k);
  }
  return keyOf.size;
}

describe('sameFramesKey', () => {
  it('equal keys for equal part lists, different keys otherwise, at any part number below 2^30', () => {
    const lists = new Map<string, number[]>();
    // numbers around and past the UTF-16 surrogate range and the 15-bit unit boundary
    for (const at of [
      0,
      0x7fff,
      0x8000,
      0xd7ff,
      0xd800,
      0xdbff,
      0xdc00,
      0xdfff,
      0xffff,
      0x10000,
      0x12345678,
      2 ** 30 - 2,
    ])
      for (const l of [[at], [at + 1], [at, at + 1], [at + 1, at], [at, 0], [0, at]]) lists.set(l.join(','), l);
    const all = [...lists.values()];
    const key = sameFramesKey((id) => Int32Array.from(all[id]));
    const seen = new Map<string, number>();
    all.forEach((l, id) => {
      const k = key(id)!;
      expect(seen.has(k), `${l.join(',')} and ${all[seen.get(k) ?? 0]?.join(',')}`).toBe(false);
      seen.set(k, id);
      expect(key(id)).toBe(k);
    });
    expect(sameFramesKey(() => null)(3)).toBeNull();
    expect(sameFramesKey(() => [1, 2], true)(7)).toBe('7');
  });
});

describe("the listings' and the Growth table's row keys on fixtures/job", () => {
  const views: { view: ViewOptions; g: Granularity }[] = [
    { view: { mode: 'python-first', hideAllocator: true }, g: 'lines' },
    { view: { mode: 'python-first', hideAllocator: true }, g: 'functions' },
    { view: { mode: 'python-first', hideAllocator: true, foldImports: true }, g: 'files' },
    { view: { mode: 'merged', hideAllocator: false }, g: 'functions' },
    { view: { mode: 'native', hideAllocator: true, filters: [{ kind: 'hide', re: 'python' }] }, g: 'lines' },
    { view: { mode: 'python', hideAllocator: true, filters: [{ kind: 'focus', re: 'rollout' }] }, g: 'lines' },
  ];

  it('the listings: one row per list of shown frames at the granularity (folded frames do not count)', () => {
    let merged = 0;
    for (const p of job.processes)
      for (const { view, g } of views) {
        const viewer = processViewer(p, view);
        // the plain definition: the shown frames' texts at the granularity (an unnamed native frame by address)
        const plain = (id: number): string | null => {
          const s = viewer(id);
          if (!s) return null;
          const frames: Frame[] = g === 'files' ? atGranularity(s.frames, g) : s.frames;
          return frames
            .map((f) => (f.function || f.kind === 'python' || g === 'files' ? frameKey(f, g) : f.address))
            .join('\u0000');
        };
        const rows = partition(p.stacks.count, listingRowKey(viewer, view, g), plain);
        merged += p.stacks.count - rows;
      }
    // stacks that differ only in what the views hide were merged (the check above compared real rows)
    expect(merged).toBeGreaterThan(0);
  });

  it('the listings: in the merged view at line granularity without filters, each stack is its own row', () => {
    const p = job.processes[0];
    const view: ViewOptions = { mode: 'merged', hideAllocator: true };
    const viewer = processViewer(p, view);
    const rows = partition(p.stacks.count, listingRowKey(viewer, view, 'lines'), (id) =>
      viewer(id) ? String(id) : null,
    );
    expect(rows).toBe(p.stacks.count);
  });

  it("the Growth table: one row per list of the frame catalog's keys; a stack the filters drop in none", () => {
    let merged = 0;
    let dropped = 0;
    for (const p of job.processes) {
      const table = new FrameCatalog(p);
      for (const { view } of views) {
        const plain = (id: number): string | null =>
          table.dropped(id, view) ? null : Array.from(table.stackKeys(id, view)).join(',');
        for (let id = 0; id < p.stacks.count; id++) if (plain(id) === null) dropped++;
        merged += p.stacks.count - partition(p.stacks.count, sameFramesKey(catalogParts(table, view)), plain);
      }
    }
    expect(merged).toBeGreaterThan(0);
    expect(dropped).toBeGreaterThan(0);
  });
});
