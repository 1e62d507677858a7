import { mkdtemp, mkdir, writeFile, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { heapPathsFromArgv } from './argv.js';
import { FileAccess } from './file-access.js';
import { CHANNELS, type HostFileEntry, type RecentSession } from './host-api.js';
import { createHandlers, type Dialogs } from './ipc-handlers.js';
import { buildMenuTemplate } from './menu.js';
import { addRecent, MAX_RECENT, parseSettings, SettingsStore } from './recent.js';

let dir = '';
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'heaplens-ipc-'));
  await mkdir(path.join(dir, 'job'), { recursive: true });
  await writeFile(path.join(dir, 'job', 'a.1.0.i0.heap'), 'abcdef');
  await writeFile(path.join(dir, 'job', 'a.1.1.i1.heap'), 'ghijkl');
});

function setup(openResult: string[] | null, saveResult: string | null = null) {
  const calls: string[] = [];
  const dialogs: Dialogs = {
    showOpen: async (kind) => {
      calls.push(kind);
      return openResult;
    },
    showSave: async () => saveResult,
  };
  const files = new FileAccess();
  const settings = new SettingsStore(path.join(dir, `settings-${Math.random()}.json`));
  return { h: createHandlers({ files, settings, dialogs, now: () => 42 }), calls, files, settings };
}

describe('IPC handlers', () => {
  it('open dialog grants the folder, lists it, records a recent session', async () => {
    const { h } = setup([path.join(dir, 'job')]);
    const entries = (await h[CHANNELS.openDialog]('folder')) as HostFileEntry[];
    expect(entries.map((e) => e.relativePath)).toEqual(['job/a.1.0.i0.heap', 'job/a.1.1.i1.heap']);
    const chunk = (await h[CHANNELS.readChunk](entries[1].path, 1, 2)) as Uint8Array;
    expect(new TextDecoder().decode(chunk)).toBe('hi');
    const recent = (await h[CHANNELS.recentList]()) as RecentSession[];
    expect(recent).toHaveLength(1);
    expect(recent[0]).toMatchObject({ label: 'job', openedAt: 42 });
  });
  it('cancelled dialog returns null and grants nothing', async () => {
    const { h } = setup(null);
    expect(await h[CHANNELS.openDialog]('files')).toBeNull();
    await expect(h[CHANNELS.readChunk](path.join(dir, 'job', 'a.1.0.i0.heap'), 0, 1)).rejects.toThrow(/not opened/);
  });
  it('rejects bad dialog kinds and bad dropped payloads', async () => {
    const { h } = setup(null);
    await expect(h[CHANNELS.openDialog]('anything')).rejects.toThrow();
    await expect(h[CHANNELS.openDropped]('not-an-array')).rejects.toThrow();
    await expect(h[CHANNELS.openDropped](['relative/path'])).rejects.toThrow(/absolute/);
  });
  it('dropped paths are granted', async () => {
    const { h } = setup(null);
    const entries = (await h[CHANNELS.openDropped]([path.join(dir, 'job', 'a.1.0.i0.heap')])) as HostFileEntry[];
    expect(entries).toHaveLength(1);
    expect(entries[0].size).toBe(6);
  });
  it('recent sessions reopen by index only', async () => {
    const { h } = setup([path.join(dir, 'job')]);
    await h[CHANNELS.openDialog]('folder');
    expect(((await h[CHANNELS.recentOpen](0)) as HostFileEntry[]).length).toBe(2);
    await expect(h[CHANNELS.recentOpen](5)).rejects.toThrow(/recent/);
    await expect(h[CHANNELS.recentOpen]('0')).rejects.toThrow(/recent/);
    await h[CHANNELS.recentClear]();
    expect(await h[CHANNELS.recentList]()).toEqual([]);
  });
  it('symbol paths: add via dialog, remove', async () => {
    const { h } = setup([path.join(dir, 'job')]);
    expect(await h[CHANNELS.symbolPathsAdd]()).toEqual([path.join(dir, 'job')]);
    expect(await h[CHANNELS.symbolPathsRemove](path.join(dir, 'job'))).toEqual([]);
  });
  it('save writes where the dialog said, with a sanitized name', async () => {
    const target = path.join(dir, 'out.json');
    const { h } = setup(null, target);
    expect(
      await h[CHANNELS.save]({
        suggestedName: '../../x.json',
        data: '{"ok":true}',
        filters: [{ name: 'JSON', extensions: ['json'] }],
      }),
    ).toBe(target);
    expect(await readFile(target, 'utf8')).toBe('{"ok":true}');
    await expect(h[CHANNELS.save]({ suggestedName: 'x', data: 5, filters: [] })).rejects.toThrow();
  });
});

describe('settings', () => {
  it('parses defensively', () => {
    expect(parseSettings('nonsense')).toEqual({ recent: [], symbolPaths: [] });
    expect(parseSettings('{"editor":"emacs"}')).toEqual({ recent: [], symbolPaths: [] });
    expect(parseSettings('{"editor":"vscodium"}').editor).toBe('vscodium');
    expect(parseSettings('{"recent":[{"paths":[1]}],"symbolPaths":["/a","rel","/a"]}')).toEqual({
      recent: [],
      symbolPaths: ['/a'],
    });
  });
  it('dedupes and caps recent sessions', () => {
    let list: RecentSession[] = [];
    for (let i = 0; i < 20; i++) list = addRecent(list, [`/j${i}`], i);
    list = addRecent(list, ['/j19'], 99);
    expect(list).toHaveLength(MAX_RECENT);
    expect(list[0]).toMatchObject({ paths: ['/j19'], openedAt: 99 });
    expect(list.filter((r) => r.paths[0] === '/j19')).toHaveLength(1);
  });
});

describe('the editor a frame opens in', () => {
  it('is a setting kept with the others; a frame opens as its file link, only for an absolute path', async () => {
    const opened: string[] = [];
    const files = new FileAccess();
    const file = path.join(dir, `settings-${Math.random()}.json`);
    const settings = new SettingsStore(file);
    const dialogs: Dialogs = { showOpen: async () => null, showSave: async () => null };
    const h = createHandlers({ files, settings, dialogs, openExternal: async (u) => void opened.push(u) });
    expect(await h[CHANNELS.editorGet]()).toBe('vscode');
    expect(await h[CHANNELS.editorOpen]('/work/job/launch.py', 59)).toBe(true);
    expect(opened).toEqual(['vscode://file/work/job/launch.py:59']);
    // a relative path (a frame whose file is only a base name) opens nothing
    expect(await h[CHANNELS.editorOpen]('launch.py', 59)).toBe(false);
    await expect(h[CHANNELS.editorOpen]('/work/a.py', '59')).rejects.toThrow();
    expect(await h[CHANNELS.editorSet]('cursor')).toBe('cursor');
    await expect(h[CHANNELS.editorSet]('javascript:alert(1)')).rejects.toThrow();
    await h[CHANNELS.editorOpen]('/work/job/launch.py', 82);
    expect(opened[1]).toBe('cursor://file/work/job/launch.py:82');
    // written to settings.json beside the recent sessions and symbol folders
    expect(parseSettings(await readFile(file, 'utf8')).editor).toBe('cursor');
  });
});

describe('menu and argv', () => {
  it('has the expected accelerators and sends commands', () => {
    const sent: string[] = [];
    const t = buildMenuTemplate(
      'linux',
      (c) => sent.push(c),
      [],
      () => undefined,
    );
    const file = t.find((m) => m.label === 'File');
    const items = Array.isArray(file?.submenu) ? file.submenu : [];
    const open = items.find((i) => i.label === 'Open Dumps…');
    expect(open?.accelerator).toBe('CmdOrCtrl+O');
    open?.click?.({} as never, undefined, {} as never);
    expect(sent).toEqual(['open-files']);
    expect(
      buildMenuTemplate(
        'darwin',
        () => undefined,
        [],
        () => undefined,
      )[0].role,
    ).toBe('appMenu');
  });
  it('argv keeps paths only', () => {
    expect(heapPathsFromArgv(['--inspect', '.', 'a.heap', '/abs/b.heap', 'app://x'], '/cwd')).toEqual([
      '/cwd/a.heap',
      '/abs/b.heap',
    ]);
  });
  it('preload channel names equal CHANNELS', async () => {
    const src = await readFile(new URL('./preload.cts', import.meta.url), 'utf8');
    for (const [k, v] of Object.entries(CHANNELS)) expect(src).toContain(`${k}: '${v}'`);
  });
});
