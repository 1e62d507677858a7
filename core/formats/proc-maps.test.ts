import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { findMapping, isFileMapping, moduleName, parseMaps, parseMapsLine } from './proc-maps.js';
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
});
