// Issue 46 S10: names holding bidi controls (U+202E, U+2066), ESC and BEL leave every export only as visible
// <U+XXXX> text (the display rule, core/model/display-text.ts), never raw: a terminal, flamegraph.pl's SVG,
// speedscope or `go tool pprof` would otherwise act on them.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { Profile } from 'pprof-format';
import { loadJob } from '../load/load-job.js';
import { findFixture, fixturePath } from '../../tools/fixtures.js';
import { DEFAULT_VIEW, viewSource } from '../frames/view.js';
import { hasControls } from '../model/display-text.js';
import type { InputFile } from '../formats/input-file.js';
import { parseFolded, toFolded } from './folded.js';
import { toSpeedscope } from './speedscope.js';
import { toPprof } from './pprof.js';

const HOSTILE = 'le\u001b]0;owned\u0007ak\u2066y\u202Eos.bil\u2028';

async function hostileJob() {
  const name = findFixture('job', /^exact\.\d+\.20\.f\.heap$/);
  const text = readFileSync(fixturePath(name), 'utf8').replaceAll(
    '/tmp/heaplens-lab/leaky',
    `/tmp/heaplens-lab/${HOSTILE}`,
  );
  expect(text).toContain(HOSTILE);
  const bytes = new TextEncoder().encode(text);
  const file: InputFile = {
    path: name.split('/').pop()!,
    size: bytes.length,
    mtimeMs: null,
    read: async (o, l) => bytes.subarray(o, o + l),
  };
  const job = await loadJob([file]);
  return job.processes.map((p) => ({
    proc: p,
    snapshotIndex: p.snapshots.length - 1,
    frames: viewSource(p, DEFAULT_VIEW),
  }));
}

// the module's basename names the frame: the path's trailing U+2028 is cut by the maps reader
const SHOWN = 'le<U+001B>]0:owned<U+0007>ak<U+2066>y<U+202E>os.bil+0x';

describe('hostile names in every export', () => {
  it('folded: no raw control or bidi mark; the marks are visible and the lines still parse', async () => {
    const inputs = await hostileJob();
    const text = toFolded(inputs);
    expect(hasControls(text)).toBe(false);
    expect(text).not.toMatch(/\t/);
    // ';' in a name is the separator's replacement ':'
    expect(text).toContain(SHOWN);
    const lines = parseFolded(text);
    expect(lines.length).toBe(text.trimEnd().split('\n').length);
    expect(lines.some((l) => l.stack.some((f) => f.startsWith(SHOWN)))).toBe(true);
  });

  it('speedscope: frame names, files and profile names carry the marks, not the characters', async () => {
    const inputs = await hostileJob();
    const doc = toSpeedscope(inputs);
    const json = JSON.stringify(doc);
    // JSON.stringify escapes ESC and BEL (\u001b) but leaves bidi marks raw: neither may be in the data
    expect(hasControls(json)).toBe(false);
    expect(json).not.toMatch(/\\u00(1b|07)/);
    const names = doc.shared.frames.flatMap((f) => [f.name, f.file ?? '']);
    for (const n of [...names, ...doc.profiles.map((p) => p.name)]) {
      expect(hasControls(n), n).toBe(false);
      expect(n).not.toMatch(/[\t\n]/);
    }
    expect(names.some((n) => n.includes(SHOWN.replace(':', ';')))).toBe(true);
  });

  it('pprof: no string in the string table holds a control or bidi character', async () => {
    const inputs = await hostileJob();
    const profile = Profile.decode(toPprof(inputs));
    const strings = profile.stringTable.strings;
    for (const s of strings) expect(hasControls(s), JSON.stringify(s)).toBe(false);
    expect(strings.some((s) => s.includes(SHOWN.replace(':', ';')))).toBe(true);
  });
});
