// The Electron main process's gaps (issue 13, item 8), each as a plain function over real temp files.
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, readdir, writeFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { FileAccess } from './file-access.js';
import { CHANNELS } from './host-api.js';
import { createHandlers, type Dialogs } from './ipc-handlers.js';
import { regrantSymbolPaths, SettingsStore } from './recent.js';
import { isTrustedSender } from './security.js';
import { SessionStore } from './session-store.js';

const tmp = () => mkdtemp(path.join(tmpdir(), 'heaplens-main-'));
const SESSION = JSON.stringify({
  format: 'heaplens-session',
  schema: 1,
  savedAt: '2026-11-29T10:00:00.000Z',
  notes: [],
});

describe('atomic writes', () => {
  it('settings.json: a write failing before the rename (a full disk) keeps the old settings whole', async () => {
    const dir = await tmp();
    const file = path.join(dir, 'settings.json');
    await new SettingsStore(file).update((s) => ({ ...s, symbolPaths: ['/srv/symbols'] }));
    const before = await readFile(file, 'utf8');
    const failing = new SettingsStore(file, {
      beforeRename: () => {
        throw Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' });
      },
    });
    await expect(failing.update((s) => ({ ...s, symbolPaths: [...s.symbolPaths, '/srv/more'] }))).rejects.toThrow(
      /ENOSPC/,
    );
    expect(await readFile(file, 'utf8')).toBe(before);
    expect(await readdir(dir)).toEqual(['settings.json']); // no temp file left
    // and the store did not pretend it saved
    expect((await failing.load()).symbolPaths).toEqual(['/srv/symbols']);
  });

  it('reports and exports (the save channel) replace the old file in one rename', async () => {
    const dir = await tmp();
    const out = path.join(dir, 'report.html');
    await writeFile(out, 'old report');
    const files = new FileAccess();
    files.allowSave(out);
    await files.save(out, 'new report');
    expect(await readFile(out, 'utf8')).toBe('new report');
    expect(await readdir(dir)).toEqual(['report.html']);
  });
});

describe('symbol folders after a restart', () => {
  it('are granted again from settings.json; a folder that is gone is skipped', async () => {
    const dir = await tmp();
    const symbols = path.join(dir, 'symbols');
    await (await import('node:fs/promises')).mkdir(symbols);
    await writeFile(path.join(symbols, 'libx.so.debug'), 'ELF…');
    const settingsFile = path.join(dir, 'settings.json');
    await new SettingsStore(settingsFile).update((s) => ({ ...s, symbolPaths: [symbols, path.join(dir, 'gone')] }));
    // a new process: fresh grants, settings read back from disk
    const files = new FileAccess();
    await expect(files.readChunk(path.join(symbols, 'libx.so.debug'), 0, 3)).rejects.toThrow(/not opened by the user/);
    expect(await regrantSymbolPaths(new SettingsStore(settingsFile), files)).toEqual([symbols]);
    expect(new TextDecoder().decode(await files.readChunk(path.join(symbols, 'libx.so.debug'), 0, 3))).toBe('ELF');
  });
});

describe('autosave target', () => {
  function handlers(files: FileAccess, sessions: SessionStore) {
    const dialogs: Dialogs = { showOpen: async () => null, showSave: async () => null };
    return createHandlers({
      files,
      settings: new SettingsStore(path.join(tmpdir(), `s-${Math.random()}.json`)),
      dialogs,
      sessions,
    });
  }

  it('a *.json with the session marker inside a folder granted for reading is not written to', async () => {
    const dir = await tmp();
    const victim = path.join(dir, 'config.json');
    await writeFile(victim, SESSION);
    const files = new FileAccess();
    await files.grant(dir); // the user opened the folder (of dumps)
    const sessions = new SessionStore(await tmp());
    const h = handlers(files, sessions);
    await expect(h[CHANNELS.sessionOpened](victim)).rejects.toThrow(/not opened as a file/);
    await sessions.autosave(SESSION.replace('"notes":[]', '"notes":[{"id":"n1"}]'));
    expect(await readFile(victim, 'utf8')).toBe(SESSION);
  });

  it('a session file the user opened itself is the autosave target', async () => {
    const dir = await tmp();
    const mine = path.join(dir, 'job.heaplens.json');
    await writeFile(mine, SESSION);
    const files = new FileAccess();
    await files.grant(mine);
    const sessions = new SessionStore(await tmp());
    await handlers(files, sessions)[CHANNELS.sessionOpened](mine);
    const next = SESSION.replace('"notes":[]', '"notes":[{"id":"n1"}]');
    expect(await sessions.autosave(next)).toBe(mine);
    expect(await readFile(mine, 'utf8')).toBe(next);
  });
});

describe('FIFOs and other non-regular files', () => {
  it('are refused at once, not read (an open for reading would block until a writer comes)', async () => {
    const dir = await tmp();
    const fifos = [0, 1, 2, 3, 4].map((i) => path.join(dir, `trap${i}.heap`));
    for (const f of fifos) execFileSync('mkfifo', [f]);
    const files = new FileAccess();
    await files.grant(dir);
    const t0 = performance.now();
    // five at once: more than libuv's four pool threads, which would all block
    const results = await Promise.allSettled(fifos.map((f) => files.readChunk(f, 0, 16)));
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected', 'rejected', 'rejected', 'rejected']);
    for (const r of results) expect(String((r as PromiseRejectedResult).reason)).toMatch(/not a regular file/);
    expect(performance.now() - t0).toBeLessThan(2000);
    // the listing leaves them out, and other file operations still run
    expect(await files.list(dir)).toEqual([]);
    await writeFile(path.join(dir, 'ok.heap'), 'x');
    expect((await files.readChunk(path.join(dir, 'ok.heap'), 0, 1)).length).toBe(1);
  });

  it('an autosave path that is a FIFO is not read', async () => {
    const dir = await tmp();
    execFileSync('mkfifo', [path.join(dir, 'autosave.heaplens.json')]);
    const t0 = performance.now();
    expect(await new SessionStore(dir).readAutosave()).toBeNull();
    expect(performance.now() - t0).toBeLessThan(2000);
  });
});

describe('IPC sender', () => {
  it("only the app's own top-level frame: not an iframe, another origin, or a gone frame", () => {
    const top = { url: 'app://bundle/index.html', parent: null };
    expect(isTrustedSender(top)).toBe(true);
    expect(isTrustedSender({ url: 'app://bundle/index.html', parent: top })).toBe(false); // a subframe
    expect(isTrustedSender({ url: 'https://evil.example/', parent: null })).toBe(false);
    expect(isTrustedSender({ url: 'app://bundle.evil/index.html', parent: null })).toBe(false);
    expect(isTrustedSender({ url: 'app://bundleevil/', parent: null })).toBe(false);
    expect(isTrustedSender(null)).toBe(false);
    expect(isTrustedSender({ url: 'http://127.0.0.1:5173/src/main.ts', parent: null }, 'http://127.0.0.1:5173')).toBe(
      true,
    );
    expect(isTrustedSender({ url: 'http://127.0.0.1:51730/', parent: null }, 'http://127.0.0.1:5173')).toBe(false);
  });

  it('main.ts checks event.senderFrame, not the window URL', () => {
    const main = readFileSync(path.join(import.meta.dirname, 'main.ts'), 'utf8');
    expect(main).toMatch(/isTrustedSender\(event\.senderFrame/);
    expect(main).not.toMatch(/\.getURL\(\)/);
  });
});

describe('packaging fuses', () => {
  it('GrantFileProtocolExtraPrivileges is off in electron-builder.yml', () => {
    const yml = readFileSync(path.join(import.meta.dirname, '..', 'electron-builder.yml'), 'utf8');
    const fuses = yml.slice(yml.indexOf('electronFuses:'));
    expect(fuses).toMatch(/^\s+grantFileProtocolExtraPrivileges: false$/m);
    expect(fuses).toMatch(/^\s+runAsNode: false$/m);
  });
});
