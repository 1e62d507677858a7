// The host API: where files come from and where exports go. Two implementations with one interface:
// Electron (the preload's window.heaplens, real paths read in chunks by the main process) and the plain browser
// (File objects from an <input type=file> or drag-and-drop, folders walked with webkitGetAsEntry).

import {
  EDITOR_NAMES,
  EDITORS,
  type HeaplensElectronApi,
  type HostFileEntry,
  type MenuCommand,
} from '../../../app/host-api.ts';
import type { SourceFile } from './protocol.ts';
import { spawnAnalysisWorker, type WorkerLike } from './spawn-worker.ts';
import { servedByNodeEngine, socketEngine } from './engine-socket.ts';
import { portEngine } from './engine-port.ts';
import { browserSaveDownload as browserSave } from './download.ts';

export interface Host {
  /** 'report': the page of a single-file report (lib/report-host.ts): no file access, nothing saved */
  readonly kind: 'browser' | 'electron' | 'report';
  /** the engine: a real Worker (in a report, the same code in-page), or the Node engine of `heaplens open` */
  spawnWorker(): WorkerLike;
  /** which engine spawnWorker gives: 'node' when the page is served by `heaplens open` (the job is its) */
  readonly engine: 'in-page' | 'node';
  /** the engine in the page, for a window whose Node engine went away (absent: none to fall back to) */
  inPageWorker?: () => WorkerLike;
  /** files from a drop event (folders recursive) */
  filesFromDrop(dt: DataTransfer): Promise<SourceFile[]>;
  /** files from an <input type=file> (browser) */
  filesFromInput(list: FileList): SourceFile[];
  /** native dialog (Electron); null when the browser must use its <input> */
  openDialog(kind: 'files' | 'folder'): Promise<SourceFile[] | null> | null;
  /** chunk reader for SourceFile.hostPath (Electron only) */
  readChunk: ((hostPath: string, offset: number, length: number) => Promise<Uint8Array>) | null;
  /** the bundled sample job (fixtures/oom-job, vite.config.ts) */
  sampleFiles(): Promise<SourceFile[]>;
  save(name: string, data: string | Uint8Array, mime: string): Promise<void>;
  /** binaries and debug files under the user's symbol folders (Electron; empty in the browser) */
  symbolFiles(): Promise<SourceFile[]>;
  /** symbol folders (null: not supported by this host) */
  symbolPaths: { list(): Promise<string[]>; add(): Promise<string[]>; remove(p: string): Promise<string[]> } | null;
  /** recent sessions (null: not supported by this host) */
  recent: { list(): Promise<{ label: string; openedAt: number }[]>; open(index: number): Promise<SourceFile[]> } | null;
  /** sessions: explicit save (download in the browser; atomic write through main in Electron) and autosave
   *  (localStorage in the browser; atomic write in Electron) */
  session: {
    save(text: string, saveAs: boolean, suggestedName: string): Promise<string | null>;
    /** `job`: core/notes/job-key.ts of the session's files; each job has its own autosave */
    autosave(text: string, job: string): Promise<void>;
    /** the most recent autosave of any job */
    readAutosave(): Promise<string | null>;
    /** "Forget" on the open screen: the latest autosave is not offered again */
    forgetAutosave(): void;
    /** a session file was opened from here: later saves go back to it (Electron) */
    opened(file: SourceFile): void;
    reset(): void;
    /** reopens the paths a session names (Electron, after main's confirmation); null: this host cannot */
    openPaths: ((paths: string[]) => Promise<SourceFile[]>) | null;
  };
  /** the text of an opened file (session, report) */
  /** the whole text; refused before reading when the file is larger than maxBytes (default 256 MiB) */
  readText(file: SourceFile, maxBytes?: number): Promise<string>;
  onMenu(listener: (c: MenuCommand) => void): () => void;
  onOpenRequest(listener: (files: SourceFile[]) => void): () => void;
  /**
   * the editor a frame's file:line opens in (Electron: a `vscode://file/<path>:<line>` link built by main, the
   * editor kept with the app's settings); null: the page copies the path:line instead
   */
  editor: {
    choices: readonly { id: string; name: string }[];
    get(): Promise<string>;
    set(editor: string): Promise<string>;
    /** false: not opened (a path that is not absolute) */
    open(path: string, line: number): Promise<boolean>;
  } | null;
  /** a dataset folder read by the main process, batch by batch (Electron); null: this host cannot read one */
  dataset: {
    open(dir: string): Promise<number>;
    next(handle: number): Promise<unknown>;
    close(handle: number): Promise<void>;
  } | null;
}

declare global {
  interface Window {
    heaplens?: HeaplensElectronApi;
  }
}

/** No File.size / File.lastModified here: those are synchronous IPC per file on the UI thread (see SourceFile). */
function fromFile(f: File, path?: string): SourceFile {
  const rel = path ?? (f.webkitRelativePath !== '' ? f.webkitRelativePath : f.name);
  return { path: rel, size: -1, mtimeMs: null, blob: f };
}

function fromEntry(e: HostFileEntry): SourceFile {
  return { path: e.relativePath, size: e.size, mtimeMs: e.mtimeMs, hostPath: e.path };
}

function readAllEntries(reader: FileSystemDirectoryReader): Promise<FileSystemEntry[]> {
  return new Promise((resolve, reject) => {
    const all: FileSystemEntry[] = [];
    const next = (): void =>
      reader.readEntries((batch) => {
        if (batch.length === 0) resolve(all);
        else {
          all.push(...batch);
          next();
        }
      }, reject);
    next();
  });
}

async function walkEntry(entry: FileSystemEntry, out: SourceFile[]): Promise<void> {
  if (entry.isFile) {
    const file = await new Promise<File>((resolve, reject) => (entry as FileSystemFileEntry).file(resolve, reject));
    out.push(fromFile(file, entry.fullPath.replace(/^\/+/, '')));
  } else if (entry.isDirectory) {
    const children = await readAllEntries((entry as FileSystemDirectoryEntry).createReader());
    children.sort((a, b) => (a.name < b.name ? -1 : 1));
    for (const c of children) if (!c.name.startsWith('.')) await walkEntry(c, out);
  }
}

/** Browser drop: entries first (keeps folder structure), File objects where entries are unavailable. */
export async function browserFilesFromDrop(dt: DataTransfer): Promise<SourceFile[]> {
  const out: SourceFile[] = [];
  const items = Array.from(dt.items ?? []);
  const entries: FileSystemEntry[] = [];
  const loose: File[] = [];
  for (const item of items) {
    if (item.kind !== 'file') continue;
    const entry = typeof item.webkitGetAsEntry === 'function' ? item.webkitGetAsEntry() : null;
    if (entry) entries.push(entry);
    else {
      const f = item.getAsFile();
      if (f) loose.push(f);
    }
  }
  if (entries.length === 0 && loose.length === 0) loose.push(...Array.from(dt.files ?? []));
  for (const e of entries) await walkEntry(e, out);
  for (const f of loose) out.push(fromFile(f));
  return out;
}

async function fetchSample(): Promise<SourceFile[]> {
  const base = new URL('sample/', document.baseURI);
  const res = await fetch(new URL('index.json', base));
  if (!res.ok) throw new Error('the sample series is not bundled in this build');
  // `url`: where the build put the file (vite.config.ts: gzipped files under another name, so that no server
  // inflates them on the way)
  const index = (await res.json()) as { files: { path: string; url?: string; size: number; mtimeMs: number }[] };
  return Promise.all(
    index.files.map(async (f) => {
      const r = await fetch(new URL(f.url ?? f.path, base));
      const blob = await r.blob();
      return { path: `sample/${f.path}`, size: f.size, mtimeMs: f.mtimeMs, blob };
    }),
  );
}

export const AUTOSAVE_KEY = 'heaplens.autosave';
/** Largest text read from an opened session or report file. */
const MAX_TEXT_BYTES = 256 * 1024 * 1024;

export async function readTextVia(
  file: SourceFile,
  readChunk: Host['readChunk'],
  maxBytes = MAX_TEXT_BYTES,
): Promise<string> {
  if (file.blob) {
    if (file.blob.size > maxBytes)
      throw new Error(`${file.path} is too large (${file.blob.size} bytes, at most ${maxBytes} are read)`);
    return file.blob.text();
  }
  if (file.hostPath && readChunk) {
    if (file.size > maxBytes)
      throw new Error(`${file.path} is too large (${file.size} bytes, at most ${maxBytes} are read)`);
    const parts: Uint8Array[] = [];
    for (let off = 0; ;) {
      const b = await readChunk(file.hostPath, off, 8 << 20);
      if (b.length === 0) break;
      parts.push(b);
      off += b.length;
      if (off > maxBytes) throw new Error(`${file.path} is too large`);
    }
    return new TextDecoder().decode(await new Blob(parts.map((p) => new Uint8Array(p))).arrayBuffer());
  }
  throw new Error(`no content for ${file.path}`);
}

export function browserHost(): Host {
  return {
    kind: 'browser',
    engine: 'in-page',
    spawnWorker: spawnAnalysisWorker,
    filesFromDrop: browserFilesFromDrop,
    filesFromInput: (list) => Array.from(list, (f) => fromFile(f)),
    openDialog: () => null,
    readChunk: null,
    dataset: null,
    editor: null,
    sampleFiles: fetchSample,
    save: browserSave,
    symbolFiles: async () => [],
    symbolPaths: null,
    recent: null,
    session: {
      async save(text, _saveAs, suggestedName) {
        const name = /\.json$/i.test(suggestedName) ? suggestedName : `${suggestedName}.heaplens.json`;
        await browserSave(name, text, 'application/json');
        return name;
      },
      async autosave(text, job) {
        try {
          // one entry per job; AUTOSAVE_KEY names the latest
          const key = job ? `${AUTOSAVE_KEY}:${job}` : `${AUTOSAVE_KEY}:`;
          localStorage.setItem(key, text);
          localStorage.setItem(AUTOSAVE_KEY, key);
        } catch {
          /* storage full or unavailable: the explicit save still works */
        }
      },
      async readAutosave() {
        try {
          const key = localStorage.getItem(AUTOSAVE_KEY);
          return key && key.startsWith(`${AUTOSAVE_KEY}:`) ? localStorage.getItem(key) : null;
        } catch {
          return null;
        }
      },
      forgetAutosave() {
        try {
          const key = localStorage.getItem(AUTOSAVE_KEY);
          if (key) localStorage.removeItem(key);
          localStorage.removeItem(AUTOSAVE_KEY);
        } catch {
          /* storage unavailable */
        }
      },
      opened: () => undefined,
      reset: () => undefined,
      openPaths: null,
    },
    readText: (f, max) => readTextVia(f, null, max),
    onMenu: () => () => undefined,
    onOpenRequest: () => () => undefined,
  };
}

export function electronHost(api: HeaplensElectronApi): Host {
  return {
    kind: 'electron',
    // the engine process (Node) when the main process runs one; the in-page engine is its fallback
    engine: api.engine ? 'node' : 'in-page',
    spawnWorker: api.engine ? () => portEngine() : spawnAnalysisWorker,
    inPageWorker: spawnAnalysisWorker,
    async filesFromDrop(dt) {
      const files = Array.from(dt.files ?? []);
      const entries = await api.openDropped(files);
      return entries.map(fromEntry);
    },
    filesFromInput: (list) => Array.from(list, (f) => fromFile(f)),
    openDialog: (kind) => api.openDialog(kind).then((e) => (e ? e.map(fromEntry) : null)),
    readChunk: (p, o, l) => api.readChunk(p, o, l),
    dataset: api.dataset,
    editor: {
      choices: EDITORS.map((id) => ({ id, name: EDITOR_NAMES[id] })),
      get: () => api.editor.get(),
      set: (e) => api.editor.set(e),
      open: (p, line) => api.editor.open(p, line),
    },
    sampleFiles: fetchSample,
    save: async (name, data) => {
      const ext = name.split('.').pop() ?? '*';
      await api.save({ suggestedName: name, data, filters: [{ name: ext.toUpperCase(), extensions: [ext] }] });
    },
    symbolFiles: async () => {
      const out: SourceFile[] = [];
      for (const p of await api.symbolPaths.list()) {
        try {
          out.push(...(await api.listFolder(p)).map(fromEntry));
        } catch {
          /* folder gone: skipped */
        }
      }
      return out;
    },
    symbolPaths: api.symbolPaths,
    recent: {
      list: () => api.recent.list(),
      open: async (i) => (await api.recent.open(i)).map(fromEntry),
    },
    session: {
      save: (text, saveAs, name) => api.session.save(text, saveAs, name),
      autosave: async (text, job) => {
        await api.session.autosave(text, job);
      },
      readAutosave: () => api.session.readAutosave(),
      forgetAutosave: () => undefined,
      opened: (f) => {
        if (f.hostPath) void api.session.opened(f.hostPath).catch(() => undefined);
      },
      reset: () => void api.session.reset().catch(() => undefined),
      openPaths: async (paths) => (await api.session.openPaths(paths)).map(fromEntry),
    },
    readText: (f, max) => readTextVia(f, (p, o, l) => api.readChunk(p, o, l), max),
    onMenu: (l) => api.onMenu(l),
    onOpenRequest: (l) => api.onOpenRequest((entries) => l(entries.map(fromEntry))),
  };
}

/**
 * The page served by `heaplens open`: the Node engine answers over a WebSocket and holds the job it was started on;
 * files dropped here are read by the in-page engine once the Node one is gone (shell.svelte.ts falls back).
 */
export function servedHost(): Host {
  return { ...browserHost(), engine: 'node', spawnWorker: () => socketEngine(), inPageWorker: spawnAnalysisWorker };
}

export function detectHost(): Host {
  if (typeof window !== 'undefined' && window.heaplens?.kind === 'electron') return electronHost(window.heaplens);
  return servedByNodeEngine() ? servedHost() : browserHost();
}
