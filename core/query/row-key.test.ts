// The row key: two stacks are one row exactly when their shown frames' parts are the same list.
import { describe, expect, it } from 'vitest';
import type { Frame } from '../frames/describe.js';
import { frameKey } from '../frames/stack-filter.js';
import { shownKey } from './row-key.js';

const frame = (fn: string): Frame => ({
  address: '0x1',
  kind: 'native',
  module: 'm',
  moduleOffset: '0x1',
  function: fn,
  file: 'f.c',
  line: 1,
});

describe('shownKey', () => {
  it('equal keys for the same parts, different keys otherwise, at any part number', () => {
    const ids = new Map<string, number>();
    // numbers around and past the UTF-16 surrogate range and the 15-bit unit boundary
    for (const at of [0, 0x7fff, 0xd7ff, 0xd800, 0xdbff, 0xdc00, 0xdfff, 0xffff, 0x10000, 0x12345678]) {
      const a = frame(`a${at}`);
      const b = frame(`b${at}`);
      // the part numbers the key would give these frames after that many other parts
      ids.set(frameKey(a, 'functions'), at);
      ids.set(frameKey(b, 'functions'), at + 1);
      const ka = shownKey({ frames: [a], folds: [] }, 'functions', ids);
      const kb = shownKey({ frames: [b], folds: [] }, 'functions', ids);
      expect(ka, String(at)).not.toBe(kb);
      expect(shownKey({ frames: [frame(`a${at}`)], folds: [] }, 'functions', ids)).toBe(ka);
      expect(shownKey({ frames: [a, b], folds: [] }, 'functions', ids)).not.toBe(
        shownKey({ frames: [b, a], folds: [] }, 'functions', ids),
      );
    }
  });
});
