import { describe, expect, it } from 'vitest';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import {
  decodeSystingSlot,
  isSystingCodeMapName,
  lineForInstruction,
  parseSystingCodeMap,
  systingFrame,
  systingTokenFromMapsPaths,
} from './systing-codemap.js';
import { PY_FIXTURES } from '../../fixtures/python/fixture-helpers.js';

interface Expected {
  minor: number;
  token: string;
  pid: number;
  codes: { id: number; qualname: string; file: string; firstLine: number; lines: (number | null)[] }[];
}

const DIR = join(PY_FIXTURES, 'systing');

describe('systing code maps written from real CPython code objects', () => {
  for (const minor of [11, 12, 13]) {
    it(`3.${minor}: names, widths and every instruction's line match CPython's co_positions()`, () => {
      const text = readFileSync(join(DIR, `pycode-4242-00c0ffee12345678-py3${minor}.map`), 'utf8');
      const want = JSON.parse(readFileSync(join(DIR, `expected-py3${minor}.json`), 'utf8')) as Expected;
      const map = parseSystingCodeMap(text);
      expect(map).not.toBeNull();
      if (!map) return;
      expect(map.minor).toBe(minor);
      expect(map.token).toBe(want.token);
      expect(map.pid).toBe(4242);
      expect(map.skipped).toBe(1); // the garbage line
      expect(map.codes.get(want.codes.length + 1)).toMatchObject({ function: '', file: '', linetable: null });
      let checked = 0;
      for (const c of want.codes) {
        const code = map.codes.get(c.id);
        expect(code?.function).toBe(c.qualname);
        expect(code?.file).toBe(c.file);
        c.lines.forEach((line, inst) => {
          const slot = decodeSystingSlot(
            '0x' + ((0x5059n << 48n) | (BigInt(c.id) << 24n) | BigInt(inst + 1)).toString(16),
          );
          if (!slot) throw new Error('slot');
          expect(systingFrame(map, slot)?.line ?? null, `${c.qualname} inst ${inst}`).toBe(line);
          checked++;
        });
        // a frame that has not started is at its first line
        const notStarted = decodeSystingSlot('0x' + ((0x5059n << 48n) | (BigInt(c.id) << 24n)).toString(16));
        if (!notStarted) throw new Error('slot');
        expect(systingFrame(map, notStarted)?.line).toBe(c.firstLine);
      }
      expect(checked).toBeGreaterThan(50);
      // names in all three storage widths were exercised
      expect(want.codes.map((c) => c.qualname)).toEqual(expect.arrayContaining(['café', '日本', '𠀋']));
    });
  }
});

describe('systing code map rules', () => {
  const HEAD = '# systing-pycode 1 token=ab pid=1 python=3.12\n';
  it('slots: tag, entry, id and instruction index', () => {
    expect(decodeSystingSlot('0x5059000000000000')).toEqual({ entry: true });
    expect(decodeSystingSlot('0x5059000005000083')).toEqual({ entry: false, id: 5, inst: 0x82 });
    expect(decodeSystingSlot('0x5059000005000000')).toEqual({ entry: false, id: 5, inst: null });
    expect(decodeSystingSlot('0x7079100000000010')).toBeNull();
    expect(decodeSystingSlot('0x7f4bc7446b86')).toBeNull();
  });
  it('refuses files without the header, with a bad token, or from Python < 3.11', () => {
    expect(parseSystingCodeMap('7f75cb8c74e0 8 py::f:/srv/app.py\n')).toBeNull();
    expect(parseSystingCodeMap('# systing-pycode 1 token=../etc pid=1 python=3.12\n')).toBeNull();
    expect(parseSystingCodeMap('# systing-pycode 1 token=ab pid=1 python=3.10\n')).toBeNull();
    expect(parseSystingCodeMap('')).toBeNull();
  });
  it('skips a line cut short, over-long names and malformed fields; replaces control characters', () => {
    const m = parseSystingCodeMap(
      HEAD + '1 1 1:61 1:62 -\n2 1 1:' + '61'.repeat(1025) + ' 1:61 -\n3 1 1:610a1b 2:2f00 -\n4 1 1:6',
    );
    expect(m?.codes.size).toBe(2);
    expect(m?.codes.get(3)?.function).toBe('a\uFFFD\uFFFD');
    expect(m?.codes.has(4)).toBe(false);
  });
  it('line table: no-location entries and out-of-range indexes have no line', () => {
    // one entry (form 13, 2 code units, line +3), then one no-location entry (form 15, 1 unit)
    const t = Uint8Array.from([0x80 | (13 << 3) | 1, 6, 0x80 | (15 << 3) | 0]);
    expect(lineForInstruction(t, 10, 0)).toBe(13);
    expect(lineForInstruction(t, 10, 1)).toBe(13);
    expect(lineForInstruction(t, 10, 2)).toBeNull();
    expect(lineForInstruction(t, 10, 3)).toBeNull();
    expect(lineForInstruction(Uint8Array.from([0x01]), 10, 0)).toBeNull();
  });
  it("finds the token in a dump's maps and recognises file names", () => {
    expect(systingTokenFromMapsPaths(['/usr/lib/libc.so.6', '/memfd:systing-pycode-DEAD0a9f (deleted)'])).toBe(
      'dead0a9f',
    );
    expect(systingTokenFromMapsPaths(['/memfd:other'])).toBeNull();
    expect(isSystingCodeMapName('pycode-12-dead0a9f94b985ac.map')).toBe(true);
    expect(isSystingCodeMapName('perf-12.map')).toBe(false);
    expect(readdirSync(DIR).filter((f) => f.endsWith('.map')).length).toBe(3);
  });
});
