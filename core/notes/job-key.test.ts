// Per-job autosave keys: the same files in any order give one key, other files another.
import { describe, expect, it } from 'vitest';
import { jobKey, sessionFiles } from './job-key.js';

describe('jobKey', () => {
  it('is order-free, 16 hex digits, and differs between jobs', () => {
    const a = jobKey(['job/exact.1.0.i0.heap', 'job/exact.1.1.i1.heap']);
    expect(a).toMatch(/^[0-9a-f]{16}$/);
    expect(jobKey(['job/exact.1.1.i1.heap', 'job/exact.1.0.i0.heap'])).toBe(a);
    expect(jobKey(['other/exact.1.0.i0.heap', 'other/exact.1.1.i1.heap'])).not.toBe(a);
    expect(jobKey([])).toBe('');
  });
  it('reads the files of a session text, [] when it has none', () => {
    expect(sessionFiles('{"files":["a","b",3]}')).toEqual(['a', 'b']);
    expect(sessionFiles('not json')).toEqual([]);
  });
});
