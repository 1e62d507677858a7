// Electron main process: wiring only. The logic lives in security.ts, protocol.ts, file-access.ts,
// ipc-handlers.ts, recent.ts and menu.ts, which are unit-tested without Electron.

import {
  app,
  BrowserWindow,
  dialog,
  ipcMain,
  Menu,
  MessageChannelMain,
  nativeTheme,
  protocol,
  session,
  shell,
  utilityProcess,
  type UtilityProcess,
} from 'electron';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { FileAccess } from './file-access.js';
import { CHANNELS, type HostFileEntry, type MenuCommand, type OpenKind } from './host-api.js';
import { createHandlers, type Dialogs } from './ipc-handlers.js';
import { createDatasetHandlers, type DatasetReader } from './dataset-handlers.js';
import { SessionStore } from './session-store.js';
import { buildMenuTemplate } from './menu.js';
import { APP_SCHEME_PRIVILEGES, handleAppRequest } from './protocol.js';
import { regrantSymbolPaths, SettingsStore } from './recent.js';
import {
  APP_ENTRY,
  APP_SCHEME,
  isNavigationAllowed,
  isTrustedSender,
  isPermissionAllowed,
  isRequestAllowed,
  mainWindowOptions,
} from './security.js';
import { heapPathsFromArgv } from './argv.js';

const here = import.meta.dirname;
const rendererDir = path.resolve(here, '..', 'renderer');
const preloadPath = path.join(here, 'preload.cjs');
// Development only: `HEAPLENS_DEV_SERVER=http://127.0.0.1:5173 npm start` loads the Vite dev server instead.
const devServer = !app.isPackaged ? (process.env.HEAPLENS_DEV_SERVER ?? null) : null;

protocol.registerSchemesAsPrivileged([
  { ...APP_SCHEME_PRIVILEGES, privileges: { ...APP_SCHEME_PRIVILEGES.privileges } },
]);

if (!app.requestSingleInstanceLock()) app.quit();

// The renderer's V8 (the page, the analysis worker, the dump readers) optimizes a function after ~66 KB of its
// bytecode has run, a budget made for long-lived pages: the readers' and the merge's hot loops were optimized,
// thrown out and optimized again on the JIT's threads. With 1 MB, as the CLI sets (node/cli/heaplens.ts): a deep
// 0.78 GB job read in Chromium with this flag (bench/ui-bench.mjs, BENCH_JS_FLAGS) took 0.93× the browser's CPU
// and wall time, 2 pairs. A web page cannot set it; the desktop app can, before the first window.
app.commandLine.appendSwitch('js-flags', '--interrupt-budget=1000000');

const files = new FileAccess();
// a folder listed only in part (file-access.ts bounds): the user is told which, and that the rest is not opened
files.onListCut = (message) => void dialogs.inform?.('Part of a folder was not opened', message);
const settings = new SettingsStore(path.join(app.getPath('userData'), 'settings.json'));
let mainWindow: BrowserWindow | null = null;
const pendingOpen: string[] = [];

const dialogs: Dialogs = {
  async showOpen(kind: OpenKind | 'symbol-folder') {
    const win = mainWindow ?? undefined;
    const props: ('openFile' | 'openDirectory' | 'multiSelections')[] =
      kind === 'files' ? ['openFile', 'multiSelections'] : ['openDirectory', 'multiSelections'];
    const opts = {
      title:
        kind === 'symbol-folder'
          ? 'Add a symbol search folder'
          : kind === 'files'
            ? 'Open heap dumps'
            : 'Open a folder of dumps',
      properties: props,
      filters:
        kind === 'files'
          ? [
              { name: 'Heap dumps', extensions: ['heap', 'gz', 'maps', 'pyframes'] },
              { name: 'heaplens sessions and reports', extensions: ['json', 'html'] },
              { name: 'All files', extensions: ['*'] },
            ]
          : [],
    };
    const r = win ? await dialog.showOpenDialog(win, opts) : await dialog.showOpenDialog(opts);
    return r.canceled ? null : r.filePaths;
  },
  async confirm(message, detail) {
    const opts = {
      type: 'question' as const,
      buttons: ['Open', 'Cancel'],
      defaultId: 0,
      cancelId: 1,
      message,
      detail,
      noLink: true,
    };
    const r = mainWindow ? await dialog.showMessageBox(mainWindow, opts) : await dialog.showMessageBox(opts);
    return r.response === 0;
  },
  async inform(message, detail) {
    const opts = { type: 'info' as const, buttons: ['OK'], message, detail, noLink: true };
    if (mainWindow) await dialog.showMessageBox(mainWindow, opts);
    else await dialog.showMessageBox(opts);
  },
  async showSave(suggestedName, filters) {
    const opts = { defaultPath: suggestedName, filters };
    const r = mainWindow ? await dialog.showSaveDialog(mainWindow, opts) : await dialog.showSaveDialog(opts);
    return r.canceled || !r.filePath ? null : r.filePath;
  },
};

const sessions = new SessionStore(app.getPath('userData'));
const handlers = {
  ...createHandlers({ files, settings, dialogs, sessions, openExternal: (url) => shell.openExternal(url) }),
  // dist/dataset (the root build) beside dist/app; loaded on first use, since DuckDB is a native addon
  ...createDatasetHandlers(files, async (dir) => {
    const mod = (await import(new URL('../node/dataset/app-batches.js', import.meta.url).href)) as {
      datasetBatches: DatasetReader;
    };
    return mod.datasetBatches(dir);
  }),
};

function sendMenu(command: MenuCommand): void {
  mainWindow?.webContents.send(CHANNELS.menu, command);
}

async function openPathsInRenderer(paths: string[]): Promise<void> {
  if (!mainWindow) {
    pendingOpen.push(...paths);
    return;
  }
  const entries: HostFileEntry[] = [];
  for (const p of paths) {
    try {
      const real = await files.grant(p);
      entries.push(...(await files.list(real)));
    } catch (e) {
      console.error(`heaplens: cannot open ${p}: ${(e as Error).message}`);
    }
  }
  if (entries.length > 0) mainWindow.webContents.send(CHANNELS.openRequest, entries);
}

async function rebuildMenu(): Promise<void> {
  const { recent } = await settings.load();
  const template = buildMenuTemplate(process.platform, sendMenu, recent, (i) => {
    void handlers[CHANNELS.recentOpen](i).then((entries) => {
      mainWindow?.webContents.send(CHANNELS.openRequest, entries as HostFileEntry[]);
    });
  });
  Menu.setApplicationMenu(Menu.buildFromTemplate(template));
}

function harden(): void {
  const ses = session.defaultSession;
  ses.webRequest.onBeforeRequest((details, callback) => {
    const allowed = isRequestAllowed(details.url, devServer);
    if (!allowed) console.warn(`heaplens: blocked request ${details.url}`);
    callback({ cancel: !allowed });
  });
  ses.setPermissionRequestHandler((_wc, permission, callback) => callback(isPermissionAllowed(permission)));
  ses.setPermissionCheckHandler((_wc, permission) => isPermissionAllowed(permission));
  ses.setProxy({ mode: 'direct' }).catch(() => undefined);
}

app.on('web-contents-created', (_event, contents) => {
  contents.setWindowOpenHandler(() => ({ action: 'deny' }));
  contents.on('will-navigate', (event, url) => {
    if (!isNavigationAllowed(url, devServer)) event.preventDefault();
  });
  contents.on('will-redirect', (event, url) => {
    if (!isNavigationAllowed(url, devServer)) event.preventDefault();
  });
  contents.on('will-attach-webview', (event) => event.preventDefault());
});

app.on('open-file', (event, filePath) => {
  event.preventDefault();
  void openPathsInRenderer([filePath]);
});

app.on('second-instance', (_event, argv) => {
  if (mainWindow) {
    if (mainWindow.isMinimized()) mainWindow.restore();
    mainWindow.focus();
  }
  void openPathsInRenderer(heapPathsFromArgv(argv.slice(1)));
});

app.on('window-all-closed', () => {
  if (process.platform !== 'darwin') app.quit();
});

// The engine: the Node engine (node/engine/utility-process.ts, built beside this folder) in a utility process, so the
// app reads dumps with Node's own readers (worker threads, node:zlib) and the renderer gets answers only. It opens
// only what this process granted (the user's picks and drops, forwarded as they happen).
let engineProcess: UtilityProcess | null = null;

function startEngine(): void {
  const entry = path.join(here, '..', 'node', 'engine', 'utility-process.js');
  const child = utilityProcess.fork(entry, [], { serviceName: 'heaplens engine', stdio: 'inherit' });
  engineProcess = child;
  for (const root of files.grantedRoots()) child.postMessage({ grant: root });
  files.onGrant = (real) => engineProcess?.postMessage({ grant: real });
  child.on('exit', () => {
    if (engineProcess === child) engineProcess = null;
  });
}

/** Hands the window its own port to the engine (the page falls back to its in-page engine without one). */
function connectEngine(win: BrowserWindow): void {
  if (!engineProcess) startEngine();
  if (!engineProcess) return;
  const { port1, port2 } = new MessageChannelMain();
  engineProcess.postMessage({ connect: true }, [port1]);
  win.webContents.postMessage(CHANNELS.enginePort, null, [port2]);
}

async function createWindow(): Promise<void> {
  mainWindow = new BrowserWindow(
    mainWindowOptions(preloadPath, { devTools: !app.isPackaged, dark: nativeTheme.shouldUseDarkColors }),
  );
  mainWindow.once('ready-to-show', () => mainWindow?.show());
  mainWindow.on('closed', () => {
    mainWindow = null;
  });
  mainWindow.webContents.on('did-finish-load', () => {
    if (mainWindow) connectEngine(mainWindow);
  });
  mainWindow.webContents.once('did-finish-load', () => {
    const paths = pendingOpen.splice(0);
    if (paths.length > 0) void openPathsInRenderer(paths);
  });
  await mainWindow.loadURL(devServer ?? APP_ENTRY);
}

void app.whenReady().then(async () => {
  harden();
  protocol.handle(APP_SCHEME, async (request) => {
    const r = await handleAppRequest(request.url, request.method, rendererDir, (p) => readFile(p));
    return new Response(r.body ? new Blob([new Uint8Array(r.body)]) : null, { status: r.status, headers: r.headers });
  });
  for (const [channel, handler] of Object.entries(handlers)) {
    ipcMain.handle(channel, async (event, ...args: unknown[]) => {
      if (!isTrustedSender(event.senderFrame, devServer)) throw new Error('IPC from an unexpected frame');
      const result = await handler(...args);
      if (channel === CHANNELS.openDialog || channel === CHANNELS.openDropped || channel === CHANNELS.recentOpen)
        void rebuildMenu();
      return result;
    });
  }
  // symbol folders saved in settings.json, granted again for this run
  await regrantSymbolPaths(settings, files);
  pendingOpen.push(...heapPathsFromArgv(process.argv.slice(app.isPackaged ? 1 : 2)));
  await rebuildMenu();
  await createWindow();
  app.on('activate', () => {
    if (BrowserWindow.getAllWindows().length === 0) void createWindow();
  });
});
