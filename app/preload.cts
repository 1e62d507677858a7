// Preload (sandboxed, so CommonJS and self-contained: a sandboxed preload may require only 'electron').
// Exposes the typed HeaplensElectronApi as window.heaplens; nothing of Node or ipcRenderer leaks to the page.

// eslint-disable-next-line @typescript-eslint/no-require-imports -- a sandboxed preload is CommonJS and may require only 'electron'
import electron = require('electron');
import type {
  HeaplensElectronApi,
  HostFileEntry,
  MenuCommand,
  OpenKind,
  RecentSession,
  SaveRequest,
} from './host-api.js';

const { contextBridge, ipcRenderer, webUtils } = electron;

// Must equal CHANNELS in host-api.ts (app/preload.test.ts checks it); duplicated because a sandboxed preload
// cannot require local modules.
const C = {
  openDialog: 'heaplens:open-dialog',
  openDropped: 'heaplens:open-dropped',
  readChunk: 'heaplens:read-chunk',
  listFolder: 'heaplens:list-folder',
  symbolPathsList: 'heaplens:symbol-paths-list',
  symbolPathsAdd: 'heaplens:symbol-paths-add',
  symbolPathsRemove: 'heaplens:symbol-paths-remove',
  save: 'heaplens:save',
  recentList: 'heaplens:recent-list',
  recentOpen: 'heaplens:recent-open',
  recentClear: 'heaplens:recent-clear',
  sessionSave: 'heaplens:session-save',
  sessionAutosave: 'heaplens:session-autosave',
  sessionReadAutosave: 'heaplens:session-read-autosave',
  sessionOpened: 'heaplens:session-opened',
  sessionReset: 'heaplens:session-reset',
  sessionOpenPaths: 'heaplens:session-open-paths',
  menu: 'heaplens:menu',
  openRequest: 'heaplens:open-request',
  datasetOpen: 'heaplens:dataset-open',
  datasetNext: 'heaplens:dataset-next',
  datasetClose: 'heaplens:dataset-close',
  editorGet: 'heaplens:editor-get',
  editorSet: 'heaplens:editor-set',
  editorOpen: 'heaplens:editor-open',
  enginePort: 'heaplens:engine-port',
} as const;

// The engine process's port: handed to the page itself (a port crosses into the main world only by postMessage).
// (the preload has no DOM types: the page's window is typed here by the one call it takes)
const page = globalThis as unknown as { postMessage(msg: unknown, origin: string, transfer: unknown[]): void };
ipcRenderer.on(C.enginePort, (e) => {
  page.postMessage({ heaplensEnginePort: true }, '*', e.ports);
});

const api: HeaplensElectronApi = {
  kind: 'electron',
  engine: true,
  platform: process.platform,
  openDialog: (kind: OpenKind) => ipcRenderer.invoke(C.openDialog, kind) as Promise<HostFileEntry[] | null>,
  openDropped: (files: File[]) => {
    const paths = Array.from(files, (f) => webUtils.getPathForFile(f)).filter((p) => p !== '');
    return ipcRenderer.invoke(C.openDropped, paths) as Promise<HostFileEntry[]>;
  },
  readChunk: (path: string, offset: number, length: number) =>
    ipcRenderer.invoke(C.readChunk, path, offset, length) as Promise<Uint8Array>,
  listFolder: (path: string) => ipcRenderer.invoke(C.listFolder, path) as Promise<HostFileEntry[]>,
  symbolPaths: {
    list: () => ipcRenderer.invoke(C.symbolPathsList) as Promise<string[]>,
    add: () => ipcRenderer.invoke(C.symbolPathsAdd) as Promise<string[]>,
    remove: (path: string) => ipcRenderer.invoke(C.symbolPathsRemove, path) as Promise<string[]>,
  },
  save: (request: SaveRequest) => ipcRenderer.invoke(C.save, request) as Promise<string | null>,
  recent: {
    list: () => ipcRenderer.invoke(C.recentList) as Promise<RecentSession[]>,
    open: (index: number) => ipcRenderer.invoke(C.recentOpen, index) as Promise<HostFileEntry[]>,
    clear: () => ipcRenderer.invoke(C.recentClear) as Promise<void>,
  },
  session: {
    save: (text: string, saveAs: boolean, suggestedName: string) =>
      ipcRenderer.invoke(C.sessionSave, text, saveAs, suggestedName) as Promise<string | null>,
    autosave: (text: string, job: string) => ipcRenderer.invoke(C.sessionAutosave, text, job) as Promise<string>,
    readAutosave: () => ipcRenderer.invoke(C.sessionReadAutosave) as Promise<string | null>,
    opened: (path: string) => ipcRenderer.invoke(C.sessionOpened, path) as Promise<void>,
    reset: () => ipcRenderer.invoke(C.sessionReset) as Promise<void>,
    openPaths: (paths: string[]) => ipcRenderer.invoke(C.sessionOpenPaths, paths) as Promise<HostFileEntry[]>,
  },
  dataset: {
    open: (path: string) => ipcRenderer.invoke(C.datasetOpen, path) as Promise<number>,
    next: (handle: number) => ipcRenderer.invoke(C.datasetNext, handle) as Promise<unknown>,
    close: (handle: number) => ipcRenderer.invoke(C.datasetClose, handle) as Promise<void>,
  },
  editor: {
    get: () => ipcRenderer.invoke(C.editorGet) as Promise<string>,
    set: (editor: string) => ipcRenderer.invoke(C.editorSet, editor) as Promise<string>,
    open: (path: string, line: number) => ipcRenderer.invoke(C.editorOpen, path, line) as Promise<boolean>,
  },
  onMenu: (listener: (command: MenuCommand) => void) => {
    const wrapped = (_e: unknown, command: MenuCommand): void => listener(command);
    ipcRenderer.on(C.menu, wrapped);
    return () => {
      ipcRenderer.removeListener(C.menu, wrapped);
    };
  },
  onOpenRequest: (listener: (entries: HostFileEntry[]) => void) => {
    const wrapped = (_e: unknown, entries: HostFileEntry[]): void => listener(entries);
    ipcRenderer.on(C.openRequest, wrapped);
    return () => {
      ipcRenderer.removeListener(C.openRequest, wrapped);
    };
  },
};

contextBridge.exposeInMainWorld('heaplens', api);
