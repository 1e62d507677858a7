import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  findMapping,
  isFileMapping,
  locateHex,
  moduleName,
  parseMaps,
  parseMapsLine,
  type MapsEntry,
} from './proc-maps.js';
import { HeapDumpParser } from './heap-dump.js';
import { findFixture, fixturePath } from '../../tools/fixtures.js';

describe('maps', () => {
  it('reads the MAPPED_LIBRARIES section of a real dump: the program, libjemalloc, pseudo mappings', () => {
    const p = new HeapDumpParser();
    p.push(readFileSync(fixturePath(findFixture('job', /^exact\.\d+\.20\.f\.heap$/))));
    const info = p.finish();
    const { entries, problems } = parseMaps(info.mapsText!, info.mapsFirstLine);
    expect(problems).toEqual([]);
    expect(
      entries.some((e) => e.path === '/tmp/heaplens-lab/leaky' && e.perms === 'r-xp' && e.offset === 0x1000n),
    ).toBe(true);
    expect(entries.some((e) => e.path.endsWith('/libjemalloc.so.2'))).toBe(true);
    expect(entries.some((e) => e.path === '[stack]')).toBe(true);
    // sorted, and every record's address falls in some mapping
    for (let i = 1; i < entries.length; i++) expect(entries[i - 1].start < entries[i].start).toBe(true);
    const dump = readFileSync(fixturePath(findFixture('job', /^exact\.\d+\.20\.f\.heap$/)), 'latin1');
    const addrs = [...dump.matchAll(/^@ (.*)$/gm)].flatMap((m) => m[1].trim().split(/\s+/)).map((a) => BigInt(a));
    expect(addrs.length).toBeGreaterThan(10);
    const outside = addrs.filter((a) => findMapping(entries, a) === null).map((a) => '0x' + a.toString(16));
    expect(outside).toEqual([]);
  });

  it('parses paths with spaces, (deleted), anonymous lines with trailing space, 16-digit addresses', () => {
    const e = parseMapsLine('7f00-7f10 r-xp 00001000 fe:00 123    /opt/my lib/libx.so (deleted)')!;
    expect(e).toMatchObject({
      start: 0x7f00n,
      end: 0x7f10n,
      offset: 0x1000n,
      inode: 123,
      path: '/opt/my lib/libx.so',
      deleted: true,
    });
    expect(parseMapsLine('7f7764a80000-7f7765400000 rw-p 00000000 00:00 0 ')!.path).toBe('');
    const v = parseMapsLine('ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]')!;
    expect(v.start).toBe(0xffffffffff600000n);
    expect(isFileMapping(v)).toBe(false);
    expect(parseMapsLine('0000000100000000-0000000100004000: /usr/lib/dyld')!.path).toBe('/usr/lib/dyld');
  });

  it('finds the mapping of an address by binary search, and reports unreadable lines with their line number', () => {
    const { entries, problems } = parseMaps(
      '1000-2000 r-xp 0 08:01 1 /a\nnonsense\n3000-4000 r-xp 0 08:01 2 /b/c.so\n',
      10,
    );
    expect(problems).toEqual([{ line: 11, message: expect.stringContaining('nonsense') }]);
    expect(findMapping(entries, 0x3fffn)?.path).toBe('/b/c.so');
    expect(findMapping(entries, 0x2000n)).toBeNull();
    expect(moduleName(entries[1])).toBe('c.so');
  });

  it('reads maps as pprof writes them, elided and macOS maps, with no line dropped', () => {
    const { entries, problems } = parseMaps(
      [
        '  0x00400000-0x00fcb000: $build/cppbench_server_main',
        '  7f2a9c000000-7f2a9c1b5000: /lib/x86_64-linux-gnu/libc-2.15.so',
        'source=/tmp/cppbench.heap',
        '...',
        '0000000100000000-0000000100004000: /Users/me/a.out',
        '7f00000000-7f00001000 r-xp 00000000 08:01 7 /usr/lib/libz.so',
      ].join('\n'),
    );
    expect(problems).toEqual([]);
    expect(entries.map((e) => [e.start.toString(16), e.path])).toEqual([
      ['400000', '$build/cppbench_server_main'],
      ['100000000', '/Users/me/a.out'],
      ['7f00000000', '/usr/lib/libz.so'],
      ['7f2a9c000000', '/lib/x86_64-linux-gnu/libc-2.15.so'],
    ]);
  });
});

describe('locateHex', () => {
  it('finds the mapping and the file offset findMapping and BigInt arithmetic give, below and above 2^53', () => {
    const entry = (start: bigint, end: bigint, offset: bigint, path: string): MapsEntry => ({
      start,
      end,
      perms: 'r-xp',
      offset,
      dev: '08:01',
      inode: 1,
      path,
      deleted: false,
    });
    // sorted by start, as a process's maps are (findMapping's binary search)
    const entries = [
      entry(0x1000n, 0x2000n, 0n, '/a'),
      entry(0x2000n, 0x3000n, 0x5000n, '/b'),
      entry(0x7ff0_0000_0000n, 0x7ff0_0000_1000n, 0x1f_ffff_ffff_fff0n, '/offset-past-2^53'),
      entry(0x1f_ffff_ffff_f000n, 0x20_0000_0000_1000n, 0x10n, '/across-2^53'),
      entry(0x20_0000_0000_1000n, 0x20_0000_0000_2000n, 0n, '/above'),
      entry(0x20_0000_0000_3000n, 0x20_0000_0000_4000n, 0xffff_ffff_ffff_0000n, '/huge-offset'),
      entry(0xffff_ffff_ff60_0000n, 0xffff_ffff_ff60_1000n, 0n, '[vsyscall]'),
    ];
    const want = (hex: string) => {
      const a = BigInt(hex);
      const e = findMapping(entries, a);
      return e ? { entry: e, offset: '0x' + (a - e.start + e.offset).toString(16) } : null;
    };
    const probes = [0n, 0xfffn, 0x1000n, 0x1fffn, 0x2000n, 0x2abcn, 0x3000n, 0x7ff0_0000_0800n, 0x7ff0_0000_1000n];
    for (const e of entries) probes.push(e.start - 1n, e.start, e.start + 1n, e.end - 1n, e.end);
    for (let k = -3n; k <= 3n; k++) probes.push((1n << 53n) + k);
    probes.push((1n << 64n) - 1n);
    for (const p of probes) {
      if (p < 0n) continue;
      const hex = '0x' + p.toString(16);
      expect(locateHex(entries, hex), hex).toEqual(want(hex));
    }
    expect(locateHex(entries, '0x2abc')).toEqual({ entry: entries[1], offset: '0x5abc' });
    // past 2^53 the offset is not exact as a double: the BigInt path gives it
    expect(locateHex(entries, '0x7ff000000fff')?.offset).toBe('0x20000000000fef');
    expect(locateHex([], '0x10')).toBeNull();
  });
});
