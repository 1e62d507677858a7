import { describe, expect, it } from 'vitest';
import { classifySideFile, looksLikeDumpBytes, parseDumpName } from './dump-filename.js';

describe('dump file names', () => {
  it('reads prefix, pid, sequence and trigger (i, m, u, f)', () => {
    expect(parseDumpName('job/jeprof.26525.255.f.heap')).toEqual({
      prefix: 'jeprof',
      pidNamespace: null,
      pid: 26525,
      seq: 255,
      trigger: 'final',
      triggerSeq: null,
    });
    expect(parseDumpName('a/b/exact.1.12.m11.heap')).toMatchObject({
      pid: 1,
      seq: 12,
      trigger: 'manual',
      triggerSeq: 11,
    });
    expect(parseDumpName('x.9.3.u2.heap')?.trigger).toBe('high-water');
    expect(parseDumpName('x.9.3.i2.heap.gz')?.trigger).toBe('interval');
    expect(parseDumpName('/tmp/my.prefix.with.dots.77.4.i1.heap')?.prefix).toBe('my.prefix.with.dots');
  });

  it('reads the pid-namespace field of jemalloc 5.3.1 (namespace ids are 10-digit inode numbers)', () => {
    expect(parseDumpName('jeprof.4026531836.4242.7.i3.heap')).toMatchObject({
      prefix: 'jeprof',
      pidNamespace: 4026531836,
      pid: 4242,
      seq: 7,
    });
  });

  it('returns null for names jemalloc did not write', () => {
    expect(parseDumpName('final.heap')).toBeNull();
    expect(parseDumpName('jeprof.1.2.x3.heap')).toBeNull();
  });

  it('recognises maps files, Python frame tables and perf maps', () => {
    expect(classifySideFile('job/maps.123')).toEqual({ kind: 'maps', pid: 123 });
    expect(classifySideFile('job/123.maps')).toEqual({ kind: 'maps', pid: 123 });
    expect(classifySideFile('copy/proc/4711/maps')).toEqual({ kind: 'maps', pid: 4711 });
    expect(classifySideFile('job/maps')).toEqual({ kind: 'maps', pid: null });
    expect(classifySideFile('job/perf-99.map')).toEqual({ kind: 'perf-map', pid: 99 });
    expect(classifySideFile('job/jeprof.5.1.i0.heap.pyframes')).toEqual({ kind: 'pyframes', pid: 5 });
    expect(classifySideFile('job/x.heap')).toBeNull();
  });

  it('sniffs dumps by their first bytes', () => {
    const b = (s: string) => new TextEncoder().encode(s);
    expect(looksLikeDumpBytes(b('heap_v2/524288\n'))).toBe(true);
    expect(looksLikeDumpBytes(b('heap profile: 1: 2 [3: 4] @ heapprofile'))).toBe(true);
    expect(looksLikeDumpBytes(new Uint8Array([0x1f, 0x8b, 8]))).toBe(true);
    expect(looksLikeDumpBytes(b('#!/bin/sh'))).toBe(false);
  });
});
