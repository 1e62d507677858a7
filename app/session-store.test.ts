// Session files from main: atomic writes (a crash before the rename leaves the old file whole), the current
// session file vs the autosave file, text checks, and the IPC handlers over a stub save dialog.
import { mkdtemp, readFile, readdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { FileAccess } from './file-access.js';
import { CHANNELS } from './host-api.js';
import { createHandlers } from './ipc-handlers.js';
import { SettingsStore } from './recent.js';
import { AUTOSAVE_NAME, checkSessionText, SessionStore, writeFileAtomic } from './session-store.js';

const doc = (notes: number): string =>
  JSON.stringify({
    format: 'heaplens-session',
    schema: 1,
    savedAt: '2026-11-29T10:00:00.000Z',
    notes: Array.from({ length: notes }, (_, i) => ({ id: `n${i}` })),
  });

describe('session store', () => {
  it('checks the text: JSON object, heaplens-session, not read-only', () => {
    expect(checkSessionText(doc(1))).toBe(doc(1));
    expect(() => checkSessionText(42)).toThrow(/string/);
    expect(() => checkSessionText('{')).toThrow(/JSON/);
    expect(() => checkSessionText('[]')).toThrow(/object/);
    expect(() => checkSessionText('{"format":"other"}')).toThrow(/not a heaplens session/);
    expect(() => checkSessionText('{"format":"heaplens-session","readOnly":true}')).toThrow(/read-only/);
  });
  it('atomic write: a failure before the rename leaves the previous file whole and no temp file', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'heaplens-ss-'));
    const f = path.join(dir, 's.heaplens.json');
    await writeFileAtomic(f, doc(1));
    await expect(
      writeFileAtomic(f, doc(5), {
        beforeRename: () => {
          throw new Error('crash');
        },
      }),
    ).rejects.toThrow('crash');
    expect(await readFile(f, 'utf8')).toBe(doc(1));
    expect(await readdir(dir)).toEqual(['s.heaplens.json']);
    await writeFileAtomic(f, doc(2));
    expect(await readFile(f, 'utf8')).toBe(doc(2));
  });
  it('autosaves to the autosave file until saved or opened, then to that file', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'heaplens-ss-'));
    const store = new SessionStore(dir);
    expect(await store.readAutosave()).toBeNull();
    expect(await store.autosave(doc(1))).toBe(path.join(dir, AUTOSAVE_NAME));
    expect(await store.readAutosave()).toBe(doc(1));
    const mine = path.join(dir, 'mine.heaplens.json');
    await store.saveTo(mine, doc(2));
    expect(await store.autosave(doc(3))).toBe(mine);
    expect(await readFile(mine, 'utf8')).toBe(doc(3));
    store.reset();
    expect(await store.autosave(doc(4))).toBe(path.join(dir, AUTOSAVE_NAME));
    await expect(store.saveTo('relative.json', doc(1))).rejects.toThrow(/absolute/);
  });
});

describe('per-job autosave', () => {
  it("a second job's autosave never overwrites the first's; the newest is offered", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'heaplens-ss-'));
    const store = new SessionStore(dir);
    const a = await store.autosave(doc(1), '0123456789abcdef');
    await new Promise((r) => setTimeout(r, 20));
    const b = await store.autosave(doc(2), 'fedcba9876543210');
    expect(a).not.toBe(b);
    expect(await readFile(a, 'utf8')).toBe(doc(1));
    expect(await readFile(b, 'utf8')).toBe(doc(2));
    expect(await store.readAutosave()).toBe(doc(2));
    // a key that is not 16 hex digits cannot name a file
    expect(await store.autosave(doc(3), '../../etc/x')).toBe(path.join(dir, AUTOSAVE_NAME));
  });
});

describe('session IPC handlers', () => {
  async function setup(saveResult: string | null) {
    const dir = await mkdtemp(path.join(tmpdir(), 'heaplens-ssh-'));
    const dialogCalls: string[] = [];
    const files = new FileAccess();
    const sessions = new SessionStore(dir);
    const h = createHandlers({
      files,
      settings: new SettingsStore(path.join(dir, 'settings.json')),
      dialogs: { showOpen: async () => null, showSave: async (name) => (dialogCalls.push(name), saveResult) },
      sessions,
    });
    return { dir, h, dialogCalls, sessions, files };
  }
  it('save asks where the first time, then saves to the same file; save-as asks again; cancel gives null', async () => {
    const { h, dialogCalls } = await setup(null);
    expect(await h[CHANNELS.sessionSave](doc(1), false, 'job')).toBeNull();
    expect(dialogCalls).toEqual(['job.heaplens.json']);
    const target = path.join(await mkdtemp(path.join(tmpdir(), 'heaplens-ssh-')), 'x.heaplens.json');
    const s2 = await setup(target);
    expect(await s2.h[CHANNELS.sessionSave](doc(1), false, 'job')).toBe(target);
    expect(await s2.h[CHANNELS.sessionSave](doc(2), false, 'job')).toBe(target);
    expect(s2.dialogCalls).toHaveLength(1);
    expect(JSON.parse(await readFile(target, 'utf8')).notes).toHaveLength(2);
    await s2.h[CHANNELS.sessionSave](doc(3), true, 'job');
    expect(s2.dialogCalls).toHaveLength(2);
    await expect(s2.h[CHANNELS.sessionSave]('not json', false, 'job')).rejects.toThrow();
  });
  it('autosave and read back; a session file becomes current only when the user opened it', async () => {
    const { dir, h, sessions, files } = await setup(null);
    expect(await h[CHANNELS.sessionAutosave](doc(1))).toBe(path.join(dir, AUTOSAVE_NAME));
    expect(await h[CHANNELS.sessionReadAutosave]()).toBe(doc(1));
    const f = path.join(dir, 'opened.heaplens.json');
    await writeFile(f, doc(0));
    await expect(h[CHANNELS.sessionOpened](f)).rejects.toThrow(/not opened/);
    await files.grant(f);
    await h[CHANNELS.sessionOpened](f);
    expect(sessions.current).toBe(f);
    await h[CHANNELS.sessionReset]();
    expect(sessions.current).toBeNull();
  });
});

describe("reopening a session's paths", () => {
  it('asks the user (listing the paths) before granting; declined or no confirm → nothing', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'heaplens-sso-'));
    await writeFile(path.join(dir, 'a.1.0.i0.heap'), 'x');
    const asked: string[] = [];
    let answer = false;
    const files = new FileAccess();
    const h = createHandlers({
      files,
      settings: new SettingsStore(path.join(dir, 'settings.json')),
      dialogs: {
        showOpen: async () => null,
        showSave: async () => null,
        confirm: async (_m, detail) => (asked.push(detail), answer),
      },
      sessions: new SessionStore(dir),
    });
    const heap = path.join(dir, 'a.1.0.i0.heap');
    expect(await h[CHANNELS.sessionOpenPaths]([heap])).toEqual([]);
    expect(asked).toEqual([`1 file in ${dir}/: a.1.0.i0.heap\n\nOnly these are opened.`]);
    await expect(h[CHANNELS.readChunk](heap, 0, 1)).rejects.toThrow(/not opened/);
    answer = true;
    const got = (await h[CHANNELS.sessionOpenPaths]([heap, path.join(dir, 'gone.heap')])) as { path: string }[];
    expect(got.map((e) => path.basename(e.path))).toEqual(['a.1.0.i0.heap']);
    expect(new TextDecoder().decode((await h[CHANNELS.readChunk](heap, 0, 1)) as Uint8Array)).toBe('x');
    await expect(h[CHANNELS.sessionOpenPaths]([])).rejects.toThrow();
    await expect(h[CHANNELS.sessionOpenPaths](['relative'])).rejects.toThrow(/absolute/);
    const noConfirm = createHandlers({
      files: new FileAccess(),
      settings: new SettingsStore(path.join(dir, 's2.json')),
      dialogs: { showOpen: async () => null, showSave: async () => null },
      sessions: new SessionStore(dir),
    });
    expect(await noConfirm[CHANNELS.sessionOpenPaths]([heap])).toEqual([]);
  });
});
