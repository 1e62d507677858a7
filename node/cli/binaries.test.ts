// `heaplens binaries`: with the job's binaries absent (an empty --sysroot), the modules whose frames stay
// unresolved, with the bytes through them computed independently from the fixture's records and maps.
import { describe, expect, it } from 'vitest';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCaptured } from './run-captured.js';
import { parseMaps, findMapping } from '../../core/formats/proc-maps.js';
import { listDumps, parentLastDump, PY_FIXTURES, unbiasedBytes } from '../../fixtures/python/fixture-helpers.js';

const cli = runCaptured;

describe('heaplens binaries', () => {
  it('lists libpython with the bytes of the stacks through it, and the path to hand over', async () => {
    const d = parentLastDump(listDumps('py312'));
    const empty = mkdtempSync(join(tmpdir(), 'heaplens-nosys-'));
    const r = await cli('binaries', join(PY_FIXTURES, 'py312', d.name), '--sysroot', empty, '--json');
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.out) as {
      processes: {
        modules: { mappingPath: string; status: string; bytes: number; stacks: number }[];
        totalBytes: number;
      }[];
    };
    const maps = parseMaps(d.mapsText).entries;
    const lib = maps.find((m) => /libpython3\.12\.so/.test(m.path))?.path ?? '';
    expect(lib).not.toBe('');
    // independent: the records whose frames fall in libpython's mappings, unbiased as jeprof does
    let want = 0;
    let stacks = 0;
    for (const rec of d.records) {
      const hit = rec.frames.some((f) => {
        try {
          return findMapping(maps, BigInt(f))?.path === lib;
        } catch {
          return false;
        }
      });
      if (hit) {
        want += unbiasedBytes(rec.liveObjects, rec.liveBytes, d.period);
        stacks++;
      }
    }
    const m = doc.processes[0].modules.find((x) => x.mappingPath === lib);
    expect(m).toMatchObject({ status: 'missing', stacks });
    expect(m?.bytes).toBeCloseTo(want, 3);
    expect(doc.processes[0].modules.every((x) => !/libjemalloc/.test(x.mappingPath))).toBe(true); // allocator frames are hidden
    const text = await cli('binaries', join(PY_FIXTURES, 'py312', d.name), '--sysroot', empty);
    expect(text.out).toContain(lib);
    expect(text.out).toMatch(/Hand over these files/);
  });

  it('refuses --no-symbols', async () => {
    expect((await cli('binaries', PY_FIXTURES, '--no-symbols')).code).toBe(2);
  });
});
