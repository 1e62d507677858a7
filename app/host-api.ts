// The typed API the preload script exposes to the renderer as `window.heaplens` (Electron only).
// Types only: shared by app/preload.cts, app/main.ts and renderer/src/lib/host.ts.

/** One file the user made available (picked in a dialog, dropped, or found under a picked/dropped folder). */
export interface HostFileEntry {
  /** absolute path on this machine, used for reads */
  path: string;
  /** path relative to the folder the user opened ('/' separators), or the base name for single files */
  relativePath: string;
  size: number;
  mtimeMs: number;
}

export interface RecentSession {
  /** the files and folders the user opened, absolute */
  paths: string[];
  /** short label for menus: first folder or file name, plus a count */
  label: string;
  openedAt: number;
}

export type OpenKind = 'files' | 'folder';

export type MenuCommand =
  | 'open-files'
  | 'open-folder'
  | 'open-sample'
  | 'export-json'
  | 'export-png'
  | 'close-job'
  | 'toggle-theme'
  | 'find'
  | 'view-processes'
  | 'view-timeline'
  | 'view-growth'
  | 'view-flame'
  | 'view-diff'
  | 'zoom-reset'
  | 'save-session'
  | 'save-session-as'
  | 'open-session'
  | 'export-report'
  | 'export-pprof'
  | 'export-folded'
  | 'export-speedscope'
  | 'notes';

export interface SaveRequest {
  suggestedName: string;
  /** text or binary content */
  data: string | Uint8Array;
  /** e.g. [{ name: 'JSON', extensions: ['json'] }] */
  filters: { name: string; extensions: string[] }[];
}

export interface HeaplensElectronApi {
  readonly kind: 'electron';
  /** the main process runs the engine in a utility process and hands its port to the page (posted as
   *  `{ heaplensEnginePort: true }` with the port); the page asks it, the in-page engine is the fallback */
  readonly engine: boolean;
  readonly platform: string;
  /** shows the native open dialog; null when cancelled; folders are listed recursively */
  openDialog(kind: OpenKind): Promise<HostFileEntry[] | null>;
  /** real paths of files/folders dropped from the OS (resolved in the preload with webUtils) */
  openDropped(files: File[]): Promise<HostFileEntry[]>;
  /** reads [offset, offset+length) of a file the user made available; shorter at end of file */
  readChunk(path: string, offset: number, length: number): Promise<Uint8Array>;
  /** lists a folder the user made available, recursively */
  listFolder(path: string): Promise<HostFileEntry[]>;
  symbolPaths: {
    list(): Promise<string[]>;
    /** opens a folder dialog and adds the choice */
    add(): Promise<string[]>;
    remove(path: string): Promise<string[]>;
  };
  /** save dialog + write; resolves to the written path or null when cancelled */
  save(request: SaveRequest): Promise<string | null>;
  recent: {
    list(): Promise<RecentSession[]>;
    /** reopens recent session `index` (its paths are re-listed) */
    open(index: number): Promise<HostFileEntry[]>;
    clear(): Promise<void>;
  };
  session: {
    /** saves the session text: to the current session file, or (saveAs, or none yet) where the save dialog says;
     *  written atomically; resolves to the path, or null when the dialog was cancelled */
    save(text: string, saveAs: boolean, suggestedName: string): Promise<string | null>;
    /** autosave (atomic) to the current session file, else the job's <userData>/autosave-<job>.heaplens.json
     *  (`job`: core/notes/job-key.ts of the session's files, 16 hex digits; '' → autosave.heaplens.json) */
    autosave(text: string, job: string): Promise<string>;
    /** text of the last autosave, or null */
    readAutosave(): Promise<string | null>;
    /** a session file the user opened (a path from a dialog or a drop): later saves go there */
    opened(path: string): Promise<void>;
    /** new job: autosaves go to the autosave file again */
    reset(): Promise<void>;
    /** reopens the dump files and folders a session names, after main asked the user to confirm them
     *  (a native dialog listing the paths); [] when declined; paths that are gone are skipped */
    openPaths(paths: string[]): Promise<HostFileEntry[]>;
  };
  /** where a frame's source opens: the editor (a setting), and opening a file at a line in it (main builds the
   *  `vscode://file/<abs path>:<line>` URL, editor-link.ts, and hands it to the OS); false: not an absolute path */
  editor: {
    get(): Promise<string>;
    set(editor: string): Promise<string>;
    open(path: string, line: number): Promise<boolean>;
  };
  /** subscribes to application-menu commands; returns an unsubscribe function */
  /**
   * A dataset folder (written by `heaplens ingest`), read by DuckDB in the main process: `open` gives a handle,
   * `next` the job's batches one at a time (core/model/job-batches.ts, opaque here), null after the last.
   */
  dataset: {
    open(path: string): Promise<number>;
    next(handle: number): Promise<unknown>;
    close(handle: number): Promise<void>;
  };
  onMenu(listener: (command: MenuCommand) => void): () => void;
  /** files the OS asked the app to open (file association, second instance, macOS open-file) */
  onOpenRequest(listener: (entries: HostFileEntry[]) => void): () => void;
}

/** The editors a frame's file:line opens in (app/editor-link.ts builds their `<scheme>://file/<path>:<line>`). */
export const EDITORS = ['vscode', 'vscode-insiders', 'vscodium', 'cursor'] as const;
export type Editor = (typeof EDITORS)[number];
export const DEFAULT_EDITOR: Editor = 'vscode';
/** as the setting's choices name them */
export const EDITOR_NAMES: Record<Editor, string> = {
  vscode: 'VS Code',
  'vscode-insiders': 'VS Code Insiders',
  vscodium: 'VSCodium',
  cursor: 'Cursor',
};

/** IPC channel names (renderer → main are invoke/handle; main → renderer is 'menu'). */
export const CHANNELS = {
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
  /** main → renderer: the engine process's port (a MessagePort, handed to the page by the preload) */
  enginePort: 'heaplens:engine-port',
} as const;
