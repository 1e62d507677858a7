// Issue 24 item 4: a session file's consent dialog shows everything it grants (resolved through symlinks, widest
// first), refuses paths with control characters, refuses outright what it cannot show; a folder listing cut at
// 32 levels or at its entry bound says so. Main-process code as plain functions over real temp folders.
import { mkdir, mkdtemp, realpath, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { MAX_CONSENT_LINES, refusedPath, sessionConsent } from './consent.js';
import { FileAccess, listPath, MAX_LIST_DEPTH } from './file-access.js';
import { CHANNELS } from './host-api.js';
import { createHandlers } from './ipc-handlers.js';
import { SettingsStore } from './recent.js';
import { SessionStore } from './session-store.js';

async function setup(): Promise<{
  dir: string;
  h: ReturnType<typeof createHandlers>;
  asked: { message: string; detail: string }[];
  told: { message: string; detail: string }[];
}> {
  const dir = await realpath(await mkdtemp(path.join(tmpdir(), 'heaplens-consent-')));
  const asked: { message: string; detail: string }[] = [];
  const told: { message: string; detail: string }[] = [];
  const h = createHandlers({
    files: new FileAccess(),
    settings: new SettingsStore(path.join(dir, 'settings.json')),
    dialogs: {
      showOpen: async () => null,
      showSave: async () => null,
      confirm: async (message, detail) => (asked.push({ message, detail }), true),
      inform: async (message, detail) => void told.push({ message, detail }),
    },
    sessions: new SessionStore(dir),
  });
  return { dir, h, asked, told };
}

describe('the session consent dialog', () => {
  it('the review: 20 dumps, then `/` as the 21st path and a path drawing fake lines — `/` is shown first, the newline path refused', async () => {
    const { dir, h, asked } = await setup();
    const dumps: string[] = [];
    for (let i = 0; i < 20; i++) {
      dumps.push(path.join(dir, `job.1.${i}.i${i}.heap`));
      await writeFile(dumps[i], 'x');
    }
    const fake = path.join(dir, 'x\n(only the folders above are opened)\n');
    await h[CHANNELS.sessionOpenPaths]([...dumps, '/', fake, path.join(dir, 'gpj.\u202eexe')]);
    expect(asked).toHaveLength(1);
    const { message, detail } = asked[0];
    expect(message).toBe('Open 1 folder this session names?');
    // the widest first: the whole file system, said as such; the dumps inside it add nothing
    expect(detail.split('\n')[0]).toBe('/  (the whole folder, every file below it)');
    expect(detail).toContain('2 paths refused: they hold control characters');
    expect(detail).not.toContain('only the folders above');
    expect(detail).not.toContain('\u202e');
    for (const c of detail) expect(refusedPath(c) && c !== '\n').toBe(false);
  });

  it('a link to `/` is shown as `/`, what it would grant', async () => {
    const { dir, h, asked } = await setup();
    await symlink('/', path.join(dir, 'dumps'));
    await h[CHANNELS.sessionOpenPaths]([path.join(dir, 'dumps')]);
    expect(asked[0].detail.split('\n')[0]).toBe('/  (the whole folder, every file below it)');
  });

  it('more places than the dialog can show: nothing is granted, and the user is told why', async () => {
    const { dir, h, asked, told } = await setup();
    const paths: string[] = [];
    for (let i = 0; i <= MAX_CONSENT_LINES; i++) {
      await mkdir(path.join(dir, `d${i}`));
      paths.push(path.join(dir, `d${i}`, 'a.heap'));
      await writeFile(paths[i], 'x');
    }
    paths.push('/etc/passwd');
    expect(await h[CHANNELS.sessionOpenPaths](paths)).toEqual([]);
    expect(asked).toEqual([]);
    expect(told[0].message).toMatch(/^This session names 3\d places to open; at most 30 can be shown/);
    await expect(h[CHANNELS.readChunk]('/etc/passwd', 0, 1)).rejects.toThrow(/not opened/);
    await expect(h[CHANNELS.readChunk](paths[0], 0, 1)).rejects.toThrow(/not opened/);
  });

  it('files are grouped by folder, folders widest first, and only what is shown is granted', () => {
    const c = sessionConsent(
      [
        { real: '/data/job/a/b', isDirectory: true },
        { real: '/data/job', isDirectory: true },
        { real: '/data/job/x.heap', isDirectory: false },
        { real: '/srv/1.heap', isDirectory: false },
        { real: '/srv/2.heap', isDirectory: false },
      ],
      0,
      1,
    );
    expect(c.ask).toBe(true);
    expect(c.detail).toBe(
      [
        '/data/job/  (the whole folder, every file below it)',
        '/data/job/a/b/  (the whole folder, every file below it)',
        '2 files in /srv/: 1.heap, 2.heap',
        '',
        '1 path no longer exist',
        '',
        'Only these are opened.',
      ].join('\n'),
    );
    expect(c.ask && c.grant).toEqual(['/data/job', '/data/job/a/b', '/srv/1.heap', '/srv/2.heap']);
  });
});

describe('a folder listing cut short says so', () => {
  it(`at ${MAX_LIST_DEPTH} levels`, async () => {
    const dir = await realpath(await mkdtemp(path.join(tmpdir(), 'heaplens-deep-')));
    let d = dir;
    for (let i = 0; i < MAX_LIST_DEPTH + 2; i++) d = path.join(d, `l${i}`);
    await mkdir(d, { recursive: true });
    await writeFile(path.join(d, 'deep.heap'), 'x');
    await writeFile(path.join(dir, 'top.heap'), 'x');
    const cuts: string[] = [];
    const got = await listPath(dir, (m) => cuts.push(m));
    expect(got.map((e) => path.basename(e.path))).toEqual(['top.heap']);
    expect(cuts).toHaveLength(1);
    expect(cuts[0]).toMatch(new RegExp(`folders more than ${MAX_LIST_DEPTH} levels deep are not listed`));
  });

  it('at its entry bound (200,000; 5 here), naming the folder', async () => {
    const dir = await realpath(await mkdtemp(path.join(tmpdir(), 'heaplens-many-')));
    for (let i = 0; i < 8; i++) await writeFile(path.join(dir, `f${i}.heap`), 'x');
    const cuts: string[] = [];
    const got = await listPath(dir, (m) => cuts.push(m), { entries: 5, depth: 32 });
    expect(got).toHaveLength(5);
    expect(cuts).toEqual([`${dir}: listed only its first 5 files (by name); the rest are not opened`]);
    const none: string[] = [];
    expect(await listPath(dir, (m) => none.push(m), { entries: 8, depth: 32 })).toHaveLength(8);
    expect(none).toEqual([]);
  });
});
