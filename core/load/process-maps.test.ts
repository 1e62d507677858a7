// Maps damage (issue 13, item 4): a flipped permission letter or a U+2028 in a path drops a maps line
// with a warning naming file and line; a damaged newest dump's maps do not move the other dumps' frames.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadJob } from './load-job.js';
import type { InputFile } from '../formats/input-file.js';
import { findMapping, parseMaps } from '../formats/proc-maps.js';
import { findFixture, fixturePath } from '../../tools/fixtures.js';

const name0 = findFixture('job', /^exact\.\d+\.0\.m0\.heap$/);
const name20 = findFixture('job', /^exact\.\d+\.20\.f\.heap$/);
const text0 = readFileSync(fixturePath(name0), 'utf8');
const text20 = readFileSync(fixturePath(name20), 'utf8');
const mem = (path: string, text: string): InputFile => {
  const b = new TextEncoder().encode(text);
  return { path, size: b.length, mtimeMs: null, read: async (o, l) => b.subarray(o, o + l) };
};
const lineOf = (text: string, needle: RegExp) => text.split('\n').findIndex((l) => needle.test(l)) + 1;

describe('maps damage', () => {
  it('a U+2028 in a path is still a maps line (the path is any bytes but a newline)', () => {
    const { entries, problems } = parseMaps('00400000-00401000 r-xp 00000000 08:01 7 /opt/a\u2028b/lib.so\n');
    expect(problems).toEqual([]);
    expect(entries[0].path).toBe('/opt/a\u2028b/lib.so');
  });

  it('damaged newest maps: every dropped line warned by file:line, older frames keep their module', async () => {
    // flip the permission letter of the executable's code mapping in the final dump only
    const codeLine = /^[0-9a-f]+-[0-9a-f]+ r-xp .*\/leaky$/m;
    const damaged = text20.replace(codeLine, (l) => l.replace(' r-xp ', ' r-xq '));
    expect(damaged).not.toBe(text20);
    const job = await loadJob([mem(name0, text0), mem(name20, damaged)]);
    const p = job.processes[0];
    expect(job.warnings).toContainEqual(
      expect.objectContaining({
        file: name20,
        line: lineOf(damaged, / r-xq /),
        message: expect.stringMatching(/maps line dropped/),
      }),
    );
    // the base is the undamaged dump, and the final dump is told so
    expect(job.warnings).toContainEqual(
      expect.objectContaining({ file: name20, message: expect.stringMatching(/maps are not used/) }),
    );
    // every frame of the first dump that its own maps put in leaky is still in leaky
    const own = parseMaps(text0.slice(text0.indexOf('MAPPED_LIBRARIES:') + 18)).entries;
    const { offsets, frames } = p.stacks;
    let inLeaky = 0;
    for (const id of p.snapshots[0].stackIds) {
      for (let k = offsets[id]; k < offsets[id + 1]; k++) {
        const a = BigInt(p.addresses.hex[frames[k]]);
        const o = findMapping(own, a);
        if (o?.path.endsWith('/leaky')) {
          inLeaky++;
          expect(findMapping(p.maps!, a)?.path).toBe(o.path);
        }
      }
    }
    expect(inLeaky).toBeGreaterThan(0);
  });

  it('a newest dump whose maps put a library elsewhere: the move is named, not silent', async () => {
    // all damaged lines still parse, but the executable's code now claims to be another file
    const moved = text20.replace(/^([0-9a-f]+-[0-9a-f]+ r-xp \S+ \S+ \S+ +)\S*\/leaky$/m, '$1/usr/lib/evil.so');
    const job = await loadJob([mem(name0, text0), mem(name20, moved)]);
    // the newest complete maps are the base: the first dump's frames in leaky are reported moved, naming both
    expect(job.warnings).toContainEqual(
      expect.objectContaining({
        file: name0,
        message: expect.stringMatching(
          new RegExp(`than by ${name20}'s \\(.*leaky → /usr/lib/evil\\.so\\): this dump's own`),
        ),
      }),
    );
    // and its frames stay in leaky, by its own maps (issue 21 item 8, issue 24 item 18)
    const p = job.processes[0];
    const own = parseMaps(text0.slice(text0.indexOf('MAPPED_LIBRARIES:') + 18)).entries;
    const { offsets, frames } = p.stacks;
    let inLeaky = 0;
    for (const id of p.snapshots[0].stackIds)
      for (let k = offsets[id]; k < offsets[id + 1]; k++) {
        const a = BigInt(p.addresses.hex[frames[k]]);
        if (findMapping(own, a)?.path.endsWith('/leaky')) {
          inLeaky++;
          expect(findMapping(p.maps!, a)?.path).toMatch(/\/leaky$/);
        }
      }
    expect(inLeaky).toBeGreaterThan(0);
  });
});
