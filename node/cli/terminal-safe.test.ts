// Terminal spoofing (issue 13, item 5): escapes and bidi controls in a dump's maps paths and file names
// reach the terminal only as visible <U+XXXX> text; --json keeps the same data, escaped.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCaptured } from './run-captured.js';
import { findFixture, fixturePath } from '../../tools/fixtures.js';
import { hasControls } from '../../core/model/display-text.js';

const cli = runCaptured;

const HOSTILE = 'le\u001b]0;owned\u0007a\u001b[2Jky\u202Eos.bil\u2028';

describe('CLI text is terminal-safe', () => {
  const name = findFixture('job', /^exact\.\d+\.20\.f\.heap$/);
  const dir = mkdtempSync(join(tmpdir(), 'heaplens-tty-'));
  const text = readFileSync(fixturePath(name), 'utf8').replaceAll(
    '/tmp/heaplens-lab/leaky',
    `/tmp/heaplens-lab/${HOSTILE}`,
  );
  expect(text).toContain(HOSTILE);
  // plus a damaged line whose warning quotes the hostile text
  writeFileSync(
    join(dir, name.split('/').pop()!),
    text.replace('MAPPED_LIBRARIES:\n', `MAPPED_LIBRARIES:\nnot a maps line \u001b[31m\u202E\n`),
  );

  it('top and summary: no raw control or bidi character, the marks are visible', async () => {
    for (const cmd of ['top', 'summary']) {
      const r = await cli(cmd, dir);
      expect(r.code).toBe(0);
      expect(hasControls(r.out) || hasControls(r.err)).toBe(false);
      expect(r.out + r.err).toContain('<U+202E>');
    }
    expect((await cli('top', dir)).out).toContain('le<U+001B>]0;owned<U+0007>a<U+001B>[2Jky<U+202E>os.bil+0x');
    expect((await cli('summary', dir)).err).toMatch(/maps line dropped.*\[31m<U\+202E>/);
  });

  it('--json: escaped so that it parses to the raw data', async () => {
    const r = await cli('top', dir, '--json', '-n', '50');
    expect(hasControls(r.out)).toBe(false);
    expect(r.out).toContain('\\u202e');
    const doc = JSON.parse(r.out);
    expect(JSON.stringify(doc)).toContain('\u202E');
  });
});
