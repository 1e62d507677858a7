import { describe, expect, it } from 'vitest';
import { classifySideFile, looksLikeDumpBytes, parseDumpName, profileNames } from './dump-filename.js';

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

describe('profileNames (pprof files: pid and sequence from the names of a folder)', () => {
  const of = (paths: string[]) => profileNames(paths).map((n) => [n.prefix, n.pid, n.seq]);
  it('reads the pid and a zero-padded counter', () => {
    expect(of(['d/leaky-5863-001.pb.gz', 'd/leaky-5863-002.pb.gz', 'd/leaky-5864-001.pb.gz'])).toEqual([
      ['leaky', 5863, 1],
      ['leaky', 5863, 2],
      ['leaky', 5864, 1],
    ]);
    expect(of(['heap.1234.pb.gz'])).toEqual([['heap', 1234, null]]);
    expect(of(['a/heap.1234.pb.gz', 'a/heap.1240.pb.gz'])).toEqual([
      ['heap', 1234, null],
      ['heap', 1240, null],
    ]);
  });
  it("takes counters, pprof's own names, times and big numbers for what they are, not pids", () => {
    // go tool pprof's saved profiles: pprof.<binary>.<types>.NNN.pb.gz
    expect(of(['pprof.svc.alloc_objects.alloc_space.inuse_objects.inuse_space.003.pb.gz'])).toEqual([
      ['pprof.svc.alloc_objects.alloc_space.inuse_objects.inuse_space.003', null, 3],
    ]);
    // a counter from 1 in every file, unpadded
    expect(of(['s/heap.1.pb.gz', 's/heap.2.pb.gz', 's/heap.3.pb.gz']).map((n) => n.slice(1))).toEqual([
      [null, 1],
      [null, 2],
      [null, 3],
    ]);
    // a date and its time of day, an epoch time
    expect(of(['heap-20261201-103000.pb.gz', 'heap-1796168152.pb.gz']).map((n) => n[1])).toEqual([null, null]);
    // pid then an unpadded counter per process
    expect(of(['h/heap.1234.1.pb', 'h/heap.1234.2.pb', 'h/heap.5678.1.pb'])).toEqual([
      ['heap', 1234, 1],
      ['heap', 1234, 2],
      ['heap', 5678, 1],
    ]);
  });
});
