import { mkdtemp, mkdir, writeFile, symlink, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { AccessError, FileAccess, MAX_CHUNK_BYTES, checkPathArgument, isInside } from './file-access.js';

let dir = '';
let outside = '';

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'heaplens-fa-'));
  outside = await mkdtemp(path.join(tmpdir(), 'heaplens-out-'));
  await mkdir(path.join(dir, 'job', 'rank0'), { recursive: true });
  await writeFile(path.join(dir, 'job', 'rank0', 'prof.100.0.i0.heap'), 'heap_v2/524288\n');
  await writeFile(path.join(dir, 'job', 'prof.101.1.i1.heap'), '0123456789');
  await writeFile(path.join(dir, 'job', '.hidden'), 'x');
  await writeFile(path.join(outside, 'secret'), 'secret');
  await symlink(path.join(outside, 'secret'), path.join(dir, 'job', 'link-out'));
  await symlink(path.join(dir, 'job'), path.join(dir, 'job', 'rank0', 'loop'));
});

describe('path checks', () => {
  it('rejects relative, empty, NUL and non-string paths', () => {
    for (const bad of ['', 'rel/x', '/a\0b', 3, null, undefined])
      expect(() => checkPathArgument(bad)).toThrow(AccessError);
    expect(checkPathArgument('/a/b/../c')).toBe(path.resolve('/a/c'));
  });
  it('isInside', () => {
    expect(isInside('/a/b', '/a/b/c')).toBe(true);
    expect(isInside('/a/b', '/a/b')).toBe(true);
    expect(isInside('/a/b', '/a/bc')).toBe(false);
    expect(isInside('/a/b', '/a')).toBe(false);
  });
});

describe('FileAccess', () => {
  it('refuses anything not granted', async () => {
    const fa = new FileAccess();
    await expect(fa.readChunk(path.join(dir, 'job', 'prof.101.1.i1.heap'), 0, 4)).rejects.toThrow(/not opened/);
  });
  it('reads chunks of granted folders, clamped at EOF', async () => {
    const fa = new FileAccess();
    await fa.grant(path.join(dir, 'job'));
    const f = path.join(dir, 'job', 'prof.101.1.i1.heap');
    expect(new TextDecoder().decode(await fa.readChunk(f, 2, 3))).toBe('234');
    expect(new TextDecoder().decode(await fa.readChunk(f, 8, 100))).toBe('89');
    expect((await fa.readChunk(f, 50, 10)).byteLength).toBe(0);
  });
  it('validates offsets and sizes', async () => {
    const fa = new FileAccess();
    await fa.grant(path.join(dir, 'job'));
    const f = path.join(dir, 'job', 'prof.101.1.i1.heap');
    await expect(fa.readChunk(f, -1, 3)).rejects.toThrow(/offset/);
    await expect(fa.readChunk(f, 0.5, 3)).rejects.toThrow(/offset/);
    await expect(fa.readChunk(f, 0, MAX_CHUNK_BYTES + 1)).rejects.toThrow(/exceeds/);
    await expect(fa.readChunk(f, 0, '3')).rejects.toThrow(/length/);
    await expect(fa.readChunk(path.join(dir, 'job'), 0, 3)).rejects.toThrow(/not a regular file/);
  });
  it('refuses symlinks that escape the granted folder and traversal', async () => {
    const fa = new FileAccess();
    await fa.grant(path.join(dir, 'job'));
    await expect(fa.readChunk(path.join(dir, 'job', 'link-out'), 0, 3)).rejects.toThrow(/not opened/);
    await expect(
      fa.readChunk(path.join(dir, 'job', '..', '..', path.basename(outside), 'secret'), 0, 3),
    ).rejects.toThrow();
  });
  it('lists folders recursively with relative paths, skipping dot files and symlink loops', async () => {
    const fa = new FileAccess();
    await fa.grant(path.join(dir, 'job'));
    const list = await fa.list(path.join(dir, 'job'));
    const rel = list.map((e) => e.relativePath).sort();
    expect(rel).toEqual(['job/prof.101.1.i1.heap', 'job/rank0/prof.100.0.i0.heap']);
    expect(list.find((e) => e.relativePath === 'job/prof.101.1.i1.heap')?.size).toBe(10);
  });
  it('a granted single file lists as itself', async () => {
    const fa = new FileAccess();
    const f = path.join(dir, 'job', 'prof.101.1.i1.heap');
    await fa.grant(f);
    expect((await fa.list(f)).map((e) => e.relativePath)).toEqual(['prof.101.1.i1.heap']);
    await expect(fa.list(path.join(dir, 'job'))).rejects.toThrow(/not opened/);
  });
  it('saves only to a path the save dialog returned, once', async () => {
    const fa = new FileAccess();
    const target = path.join(outside, 'export.json');
    await expect(fa.save(target, '{}')).rejects.toThrow(/save dialog/);
    fa.allowSave(target);
    await fa.save(target, '{"a":1}');
    expect(await readFile(target, 'utf8')).toBe('{"a":1}');
    await expect(fa.save(target, '{}')).rejects.toThrow(/save dialog/);
  });
});
