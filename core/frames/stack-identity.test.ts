import { describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { loadJob } from '../load/load-job.js';
import { rankGrowth } from '../stats/growth.js';
import {
  frameIdentities,
  frameIdentity,
  isUnresolvedIdentity,
  stackFrameIdentities,
  stackIdentityKeys,
  stackIdentityLanes,
  StackKeyTable,
} from './stack-identity.js';
import { stackFrames, type ProcessSeries } from '../model/model.js';
import { fixtureFiles } from '../../tools/fixtures.js';
import { collectInputFiles } from '../../node/io/node-files.js';
import { PY_FIXTURES } from '../../fixtures/python/fixture-helpers.js';

describe('stack identity across processes', () => {
  it('two runs of leaky at different ASLR bases: the leak stack has one key, raw addresses differ', async () => {
    const job = await loadJob(fixtureFiles('job'));
    const exact = job.processes.find((p) => p.prefix === 'exact')!;
    const sampled = job.processes.find((p) => p.prefix === 'sampled')!;
    const le = rankGrowth(exact)[0].stackId;
    const ls = rankGrowth(sampled)[0].stackId;
    const rawE = stackFrames(exact.stacks, le).map((a) => exact.addresses.hex[a]);
    const rawS = stackFrames(sampled.stacks, ls).map((a) => sampled.addresses.hex[a]);
    // the program's own frames were loaded at different addresses
    expect(rawE.filter((a, i) => a !== rawS[i]).length).toBeGreaterThan(0);
    expect(stackIdentityKeys(exact)[le]).toBe(stackIdentityKeys(sampled)[ls]);
    // frames are module + file offset, never raw addresses
    const ids = stackFrameIdentities(exact, le);
    expect(ids.some((f) => f.startsWith('n:p:/tmp/heaplens-lab/leaky+0x'))).toBe(true);
    expect(ids.some((f) => /libjemalloc\.so\.2\+0x/.test(f))).toBe(true);
    expect(ids.filter(isUnresolvedIdentity)).toEqual([]);
    // all of exact's stacks with live bytes in both processes' last dumps match by key (same program, same paths)
    const ke = new Set(stackIdentityKeys(exact));
    const shared = stackIdentityKeys(sampled).filter((k) => ke.has(k));
    expect(shared.length).toBeGreaterThanOrEqual(3); // leak, plateau, worker (churn is freed)
  });

  it('keys are one per stack id and distinct stacks in one process get distinct keys', async () => {
    const job = await loadJob(fixtureFiles('job'));
    for (const p of job.processes) {
      const keys = stackIdentityKeys(p);
      expect(keys.length).toBe(p.stacks.count);
      expect(new Set(keys).size).toBe(p.stacks.count);
    }
  });

  it("forked Python child (3.12, 3.13): its inherited stacks have the parent's keys, named by Python frames", async () => {
    for (const v of ['py312', 'py313']) {
      const job = await loadJob(await collectInputFiles([join(PY_FIXTURES, v)]));
      expect(job.processes.length, v).toBe(2);
      const [parent, child] = [...job.processes].sort((a, b) => (a.pid ?? 0) - (b.pid ?? 0));
      const pk = new Set(stackIdentityKeys(parent));
      const ck = stackIdentityKeys(child);
      // the leak (make_record) allocated before the fork is in the child's heap too
      const leakStacks = (p: ProcessSeries) =>
        [...Array(p.stacks.count).keys()].filter((s) =>
          stackFrameIdentities(p, s).some((f) => f.startsWith('y:') && JSON.parse(f.slice(2))[0] === 'make_record'),
        );
      const childLeak = leakStacks(child);
      expect(childLeak.length, v).toBeGreaterThan(0);
      for (const s of childLeak) expect(pk.has(ck[s]), `${v} stack ${s}`).toBe(true);
      // the child's own allocation site (child_work) is not in the parent
      const own = [...Array(child.stacks.count).keys()].filter((s) =>
        stackFrameIdentities(child, s).some((f) => f.startsWith('y:') && JSON.parse(f.slice(2))[0] === 'child_work'),
      );
      expect(own.length, v).toBeGreaterThan(0);
      for (const s of own) expect(pk.has(ck[s])).toBe(false);
    }
  });

  it('Python frames match by (qualname, file, line), not by the per-process frame id', async () => {
    const job = await loadJob(await collectInputFiles([join(PY_FIXTURES, 'py312')]));
    const p = job.processes[0];
    const table = p.pythonFrames!;
    const [addr, entry] = [...table.frames.entries()][0];
    const id = p.addresses.index.get(addr)!;
    // the same frame under another id in a copy of the process
    const other = '0x' + (BigInt(addr) + 0x1000n).toString(16);
    const frames = new Map(table.frames);
    frames.delete(addr);
    frames.set(other, { ...entry, addr: other });
    const hex = [...p.addresses.hex];
    hex[id] = other;
    const copy: ProcessSeries = {
      ...p,
      addresses: { hex, index: new Map(hex.map((h, i) => [h, i])) },
      pythonFrames: { ...table, frames },
    };
    expect(frameIdentity(copy, id)).toBe(frameIdentity(p, id));
    expect(frameIdentity(p, id)).toBe('y:' + JSON.stringify([entry.function, entry.file, entry.line]));
    expect(stackIdentityKeys(copy)).toEqual(stackIdentityKeys(p));
    // without the table the frame is unresolved and keyed by its raw value
    const bare: ProcessSeries = { ...copy, pythonFrames: null };
    expect(frameIdentity(bare, id)).toBe('u:' + other);
  });

  it('build-ids replace paths when known; a process without maps keeps raw addresses, marked', async () => {
    const job = await loadJob(fixtureFiles('job'));
    const exact = job.processes.find((p) => p.prefix === 'exact')!;
    const withId = frameIdentities(exact, { buildIds: new Map([['/tmp/heaplens-lab/leaky', 'abc123']]) });
    expect(withId.some((f) => f.startsWith('n:b:abc123+0x'))).toBe(true);
    const noMaps: ProcessSeries = { ...exact, maps: null };
    expect(frameIdentities(noMaps).every(isUnresolvedIdentity)).toBe(true);
  });

  it("a stack's key is the documented hash of its frames' identity texts, names that JSON escapes included", async () => {
    // the reference: each frame's identity text (frameIdentities) hashed code unit by code unit, then the frames'
    // hashes mixed leaf first, as the module's header describes the key, written here again from that description
    const keyOf = (ids: string[]): string => {
      let k1 = 0x811c9dc5;
      let k2 = 0x27d4eb2f;
      let k3 = 0x165667b1;
      for (const s of ids) {
        let h1 = 0x811c9dc5;
        let h2 = 0x9e3779b9;
        let h3 = 0x85ebca6b;
        for (let i = 0; i < s.length; i++) {
          const c = s.charCodeAt(i);
          h1 = Math.imul(h1 ^ c, 0x01000193);
          h2 = Math.imul(h2 ^ c, 0x5bd1e995);
          h2 ^= h2 >>> 15;
          h3 = Math.imul(h3 + c, 0xc2b2ae35);
          h3 ^= h3 >>> 13;
        }
        k1 = Math.imul(k1 ^ (h1 >>> 0), 0x01000193);
        k1 ^= k1 >>> 16;
        k2 = Math.imul(k2 ^ (h2 >>> 0), 0x85ebca6b);
        k2 ^= k2 >>> 13;
        k3 = Math.imul(k3 ^ (h3 >>> 0), 0xc2b2ae35);
        k3 ^= k3 >>> 16;
      }
      const hex = (h: number) => (h >>> 0).toString(16).padStart(8, '0');
      return `k${ids.length}-${hex(k1)}${hex(k2)}${hex(k3)}`;
    };
    const py = (await loadJob(await collectInputFiles([join(PY_FIXTURES, 'py312')]))).processes[0];
    // the same process with Python names and files that JSON writes escaped (quote, backslash, newline, a lone
    // surrogate, a character outside the BMP) or as they are (non-ASCII), and a frame without a line
    const odd = ['say "hi"', 'C:\\work\\x.py', 'two\nlines', 'lone \ud800', 'emoji \u{1f600}', 'größe', ''];
    const frames = new Map(
      [...py.pythonFrames!.frames].map(([a, e], i) => [
        a,
        i % 3 === 0
          ? {
              ...e,
              function: odd[i % odd.length] + e.function,
              file: odd[(i + 1) % odd.length],
              line: i % 2 ? null : e.line,
            }
          : e,
      ]),
    );
    const renamed: ProcessSeries = { ...py, pythonFrames: { ...py.pythonFrames!, frames } };
    const job = await loadJob(fixtureFiles('job'));
    for (const p of [py, renamed, ...job.processes]) {
      const keys = stackIdentityKeys(p);
      for (let s = 0; s < p.stacks.count; s++)
        expect(keys[s], `${p.key} stack ${s}`).toBe(keyOf(stackFrameIdentities(p, s)));
    }
    expect(stackIdentityKeys(renamed)).not.toEqual(stackIdentityKeys(py));
  });

  it('a job-wide key table numbers equal keys alike and prints them as stackIdentityKeys does', async () => {
    const job = await loadJob(fixtureFiles('job'));
    const table = new StackKeyTable();
    const byText = new Map<string, number>();
    for (const p of job.processes) {
      const lanes = stackIdentityLanes(p);
      const keys = stackIdentityKeys(p);
      for (let s = 0; s < p.stacks.count; s++) {
        const id = table.intern(lanes, 4 * s);
        expect(table.keys[id]).toBe(keys[s]);
        if (!byText.has(keys[s])) byText.set(keys[s], id);
        expect(id).toBe(byText.get(keys[s]));
      }
    }
    expect(table.size).toBe(byText.size);
    // past its first size (1,024 keys): numbers stay as given
    const many = new Uint32Array(4 * 5000).map((_, i) => Math.imul(i + 1, 0x9e3779b1) >>> 0);
    const ids = Array.from({ length: 5000 }, (_, k) => table.intern(many, 4 * k));
    expect(Array.from({ length: 5000 }, (_, k) => table.intern(many, 4 * k))).toEqual(ids);
    expect(new Set(ids).size).toBe(5000);
  });
});
