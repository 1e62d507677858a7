// Atomic session writes: a process killed mid-write (a real SIGKILL) or a failing write leaves the old file
// whole and readable; the autosaver coalesces changes.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { emptySession, type Session } from '../../core/notes/schema.js';
import { addNote, createNote } from '../../core/notes/notes.js';
import { serializeSession } from '../../core/notes/validate.js';
import { loadSessionFile, saveSessionFile, SessionAutosaver, writeFileAtomic } from './session-file.js';

function sessionWith(n: number, text: string): Session {
  let s = emptySession('test');
  for (let i = 0; i < n; i++)
    s = addNote(
      s,
      createNote(
        { kind: 'frame', process: null, function: `f${i}` },
        `${text} ${i}`,
        '#e4572e',
        new Date('2026-11-29T10:00:00Z'),
      ),
    );
  return s;
}

describe('session file on disk', () => {
  it('save → load equals', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'heaplens-session-'));
    const path = join(dir, 'job.heaplens-session.json');
    const s = sessionWith(3, 'note');
    await saveSessionFile(path, s, { now: new Date('2026-11-29T11:00:00Z') });
    expect(await loadSessionFile(path)).toEqual({ ...s, savedAt: '2026-11-29T11:00:00.000Z' });
    expect(readdirSync(dir)).toEqual(['job.heaplens-session.json']);
  });

  it('a process SIGKILLed mid-write leaves the old file intact (and no partial file under the real name)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'heaplens-crash-'));
    const path = join(dir, 'session.json');
    const old = sessionWith(2, 'old');
    await saveSessionFile(path, old, { now: new Date('2026-11-29T11:00:00Z') });
    const before = readFileSync(path, 'utf8');
    // The child writes a ~20 MB session in 64 KiB chunks and kills itself (SIGKILL: no cleanup runs) after 5 chunks.
    const child = join(dir, 'child.mts');
    const mod = pathToFileURL(resolve(import.meta.dirname, 'session-file.ts')).href;
    const schema = pathToFileURL(resolve(import.meta.dirname, '..', '..', 'core', 'notes', 'schema.ts')).href;
    const notes = pathToFileURL(resolve(import.meta.dirname, '..', '..', 'core', 'notes', 'notes.ts')).href;
    writeFileSync(
      child,
      `import { saveSessionFile } from ${JSON.stringify(mod)};
import { emptySession } from ${JSON.stringify(schema)};
import { addNote, createNote } from ${JSON.stringify(notes)};
let s = emptySession('child');
for (let i = 0; i < 2000; i++) s = addNote(s, createNote({ kind: 'frame', process: null, function: 'f' + i }, 'x'.repeat(10000), '#e4572e'));
let chunks = 0;
await saveSessionFile(process.argv[2], s, { chunkSize: 65536, onChunk: () => { if (++chunks === 5) process.kill(process.pid, 'SIGKILL'); } });
console.log('not killed');
`,
    );
    const r = spawnSync(process.execPath, ['--import', 'tsx', child, path], {
      encoding: 'utf8',
      cwd: resolve(import.meta.dirname, '..', '..'),
    });
    expect(r.signal, r.stderr).toBe('SIGKILL');
    expect(r.stdout).not.toContain('not killed');
    // the partial temp file is there (it was killed), the session is the old one, byte for byte
    const tmp = readdirSync(dir).filter((n) => n.endsWith('.tmp'));
    expect(tmp).toHaveLength(1);
    expect(readFileSync(join(dir, tmp[0])).length).toBe(5 * 65536);
    expect(readFileSync(path, 'utf8')).toBe(before);
    expect(await loadSessionFile(path)).toEqual({ ...old, savedAt: '2026-11-29T11:00:00.000Z' });
  });

  it('a write that fails (disk full, here simulated) keeps the old file and removes its temp file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'heaplens-fail-'));
    const path = join(dir, 's.json');
    await writeFileAtomic(path, 'old contents');
    await expect(
      writeFileAtomic(path, 'x'.repeat(300_000), {
        chunkSize: 100_000,
        onChunk: (n) => {
          if (n >= 200_000) throw new Error('ENOSPC: no space left on device');
        },
      }),
    ).rejects.toThrow('ENOSPC');
    await expect(
      writeFileAtomic(path, 'new', { beforeRename: () => Promise.reject(new Error('crash before rename')) }),
    ).rejects.toThrow('crash');
    expect(readFileSync(path, 'utf8')).toBe('old contents');
    expect(readdirSync(dir)).toEqual(['s.json']);
  });

  it('read-only sessions are never written', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'heaplens-ro-'));
    await expect(saveSessionFile(join(dir, 's.json'), { ...emptySession(), readOnly: true })).rejects.toThrow(
      /read-only/,
    );
    expect(readdirSync(dir)).toEqual([]);
  });

  it('autosave: many changes, one write after the delay; flush writes the latest; writes never overlap', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'heaplens-auto-'));
    const path = join(dir, 's.json');
    let current = sessionWith(1, 'a');
    let saves = 0;
    const auto = new SessionAutosaver(path, () => current, { delayMs: 50, onSaved: () => saves++ });
    for (let i = 0; i < 10; i++) {
      current = sessionWith(i + 1, 'a');
      auto.changed();
    }
    await new Promise((r) => setTimeout(r, 200));
    await auto.flush();
    expect(saves).toBe(1);
    expect((await loadSessionFile(path)).notes).toHaveLength(10);
    current = sessionWith(12, 'b');
    auto.changed();
    const p1 = auto.flush();
    current = sessionWith(13, 'c');
    auto.changed();
    await Promise.all([p1, auto.flush()]);
    expect(saves).toBe(3);
    expect(readFileSync(path, 'utf8')).toBe(
      serializeSession(current, new Date(JSON.parse(readFileSync(path, 'utf8')).savedAt)),
    );
    auto.dispose();
  });
});
