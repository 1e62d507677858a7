// IPC handlers of the main process as plain functions over injected dialogs, file access and settings.
// main.ts registers each with ipcMain.handle(channel, (_event, ...args) => handler(...args)).

import { realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { refusedPath, sessionConsent, type ConsentTarget } from './consent.js';
import { AccessError, checkPathArgument, type FileAccess } from './file-access.js';
import { CHANNELS, type HostFileEntry, type OpenKind, type RecentSession } from './host-api.js';
import { addRecent, addSymbolPath, removeSymbolPath, type SettingsStore } from './recent.js';
import { DEFAULT_EDITOR, editorUrl, isEditor } from './editor-link.js';
import type { SessionStore } from './session-store.js';

export interface Dialogs {
  /** absolute paths chosen, or null when cancelled */
  showOpen(kind: OpenKind | 'symbol-folder'): Promise<string[] | null>;
  /** a yes/no question (native message box); absent: treated as no */
  confirm?(message: string, detail: string): Promise<boolean>;
  /** a notice (native message box, one button) */
  inform?(message: string, detail: string): Promise<void>;
  /** absolute path chosen, or null when cancelled */
  showSave(suggestedName: string, filters: { name: string; extensions: string[] }[]): Promise<string | null>;
}

export interface HandlerDeps {
  files: FileAccess;
  settings: SettingsStore;
  dialogs: Dialogs;
  /** session files (save, autosave); absent: the session channels are not registered */
  sessions?: SessionStore;
  now?: () => number;
  /** hands a URL to the OS (shell.openExternal): an editor's file link; absent: nothing is opened */
  openExternal?: (url: string) => Promise<void>;
}

export type Handler = (...args: unknown[]) => Promise<unknown>;

const MAX_DROPPED = 10_000;
/** Most paths a session may ask to reopen (folders count as one). */
const MAX_SESSION_PATHS = 10_000;

function checkFilters(v: unknown): { name: string; extensions: string[] }[] {
  if (!Array.isArray(v)) return [];
  const out: { name: string; extensions: string[] }[] = [];
  for (const f of v.slice(0, 16)) {
    if (typeof f !== 'object' || f === null) continue;
    const o = f as Record<string, unknown>;
    if (typeof o.name !== 'string' || !Array.isArray(o.extensions)) continue;
    const exts = o.extensions.filter((e): e is string => typeof e === 'string' && /^[A-Za-z0-9*]{1,16}$/.test(e));
    out.push({ name: o.name.slice(0, 64), extensions: exts });
  }
  return out;
}

function checkSuggestedName(v: unknown): string {
  if (typeof v !== 'string') return 'heaplens-export';
  const base = path.basename(v.replace(/[\\/:*?"<>|\0]/g, '_'));
  return base.slice(0, 200) || 'heaplens-export';
}

export function createHandlers(deps: HandlerDeps): Record<string, Handler> {
  const now = deps.now ?? Date.now;

  async function openPaths(paths: string[], remember: boolean): Promise<HostFileEntry[]> {
    const out: HostFileEntry[] = [];
    const granted: string[] = [];
    for (const p of paths) {
      const real = await deps.files.grant(p);
      granted.push(real);
      out.push(...(await deps.files.list(real)));
    }
    if (remember && granted.length > 0)
      await deps.settings.update((s) => ({ ...s, recent: addRecent(s.recent, granted, now()) }));
    return out;
  }

  const sessionHandlers: Record<string, Handler> = {};
  const sessions = deps.sessions;
  if (sessions) {
    sessionHandlers[CHANNELS.sessionSave] = async (text: unknown, saveAs: unknown, suggestedName: unknown) => {
      let target = saveAs === true ? null : sessions.current;
      if (!target) {
        const name = checkSuggestedName(suggestedName);
        target = await deps.dialogs.showSave(/\.json$/i.test(name) ? name : `${name}.heaplens.json`, [
          { name: 'heaplens session', extensions: ['json'] },
        ]);
        if (!target) return null;
        target = checkPathArgument(target);
      }
      return sessions.saveTo(target, text);
    };
    sessionHandlers[CHANNELS.sessionAutosave] = async (text: unknown, job: unknown) => sessions.autosave(text, job);
    sessionHandlers[CHANNELS.sessionReadAutosave] = async () => sessions.readAutosave();
    // only a file the user made available (opened in a dialog or dropped) can become the session file
    sessionHandlers[CHANNELS.sessionOpened] = async (p: unknown) => {
      // Autosave will write to this file: only one the user opened as a file. A folder granted for reading
      // must not let any *.json in it (a session marker is easy to forge) be overwritten.
      const real = await deps.files.checkReadable(p);
      if (!(await deps.files.isGrantedFile(real)))
        throw new AccessError(`not opened as a file by the user, so not written to: ${real}`);
      sessions.opened(real);
    };
    sessionHandlers[CHANNELS.sessionReset] = async () => sessions.reset();
    // A session file names paths the user did not pick in this run (it may come from someone else): main asks
    // the user, listing them, before granting any.
    sessionHandlers[CHANNELS.sessionOpenPaths] = async (paths: unknown) => {
      if (!Array.isArray(paths) || paths.length === 0 || paths.length > MAX_SESSION_PATHS)
        throw new AccessError('paths must be a non-empty array');
      const checked = [...new Set(paths.map((p) => checkPathArgument(p)))];
      // refused before anything is resolved or shown (consent.ts); what is shown is what would be granted:
      // each path resolved through its symlinks
      const targets: ConsentTarget[] = [];
      let refused = 0;
      let gone = 0;
      for (const p of checked) {
        if (refusedPath(p)) {
          refused++;
          continue;
        }
        try {
          const real = await realpath(p);
          if (refusedPath(real)) {
            refused++;
            continue;
          }
          targets.push({ real, isDirectory: (await stat(real)).isDirectory() });
        } catch {
          gone++; // the renderer lists what is still missing
        }
      }
      const consent = sessionConsent(targets, refused, gone);
      if (!consent.ask) {
        await deps.dialogs.inform?.(consent.message, consent.detail);
        return [];
      }
      const ok = deps.dialogs.confirm ? await deps.dialogs.confirm(consent.message, consent.detail) : false;
      if (!ok) return [];
      const out: HostFileEntry[] = [];
      const opened: string[] = [];
      for (const p of consent.grant) {
        try {
          const real = await deps.files.grant(p);
          out.push(...(await deps.files.list(real)));
          opened.push(real);
        } catch {
          // gone since: the renderer lists what is still missing
        }
      }
      if (opened.length > 0) await deps.settings.update((s) => ({ ...s, recent: addRecent(s.recent, opened, now()) }));
      return out;
    };
  }

  return {
    ...sessionHandlers,
    async [CHANNELS.openDialog](kind: unknown) {
      if (kind !== 'files' && kind !== 'folder') throw new AccessError('kind must be files or folder');
      const chosen = await deps.dialogs.showOpen(kind);
      if (!chosen || chosen.length === 0) return null;
      return openPaths(chosen, true);
    },
    // The preload resolves dropped File objects to paths with webUtils.getPathForFile; a page cannot forge a
    // File with a path, so these paths stand for a user gesture (drag from the OS).
    async [CHANNELS.openDropped](paths: unknown) {
      if (!Array.isArray(paths) || paths.length > MAX_DROPPED) throw new AccessError('paths must be an array');
      const checked = paths.filter((p) => typeof p === 'string' && p !== '').map((p) => checkPathArgument(p));
      return openPaths(checked, true);
    },
    async [CHANNELS.readChunk](p: unknown, offset: unknown, length: unknown) {
      return deps.files.readChunk(p, offset, length);
    },
    async [CHANNELS.listFolder](p: unknown) {
      return deps.files.list(p);
    },
    async [CHANNELS.symbolPathsList]() {
      return (await deps.settings.load()).symbolPaths;
    },
    async [CHANNELS.symbolPathsAdd]() {
      const chosen = await deps.dialogs.showOpen('symbol-folder');
      if (!chosen || chosen.length === 0) return (await deps.settings.load()).symbolPaths;
      for (const c of chosen) await deps.files.grant(c);
      const s = await deps.settings.update((s) => ({ ...s, symbolPaths: chosen.reduce(addSymbolPath, s.symbolPaths) }));
      return s.symbolPaths;
    },
    async [CHANNELS.symbolPathsRemove](p: unknown) {
      const abs = checkPathArgument(p);
      const s = await deps.settings.update((s) => ({ ...s, symbolPaths: removeSymbolPath(s.symbolPaths, abs) }));
      return s.symbolPaths;
    },
    async [CHANNELS.save](req: unknown) {
      if (typeof req !== 'object' || req === null) throw new AccessError('bad save request');
      const r = req as Record<string, unknown>;
      const target = await deps.dialogs.showSave(checkSuggestedName(r.suggestedName), checkFilters(r.filters));
      if (!target) return null;
      const abs = deps.files.allowSave(target);
      await deps.files.save(abs, r.data);
      return abs;
    },
    async [CHANNELS.recentList](): Promise<RecentSession[]> {
      return (await deps.settings.load()).recent;
    },
    async [CHANNELS.recentOpen](index: unknown) {
      const recent = (await deps.settings.load()).recent;
      if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index >= recent.length) {
        throw new AccessError('no such recent session');
      }
      return openPaths(recent[index].paths, true);
    },
    async [CHANNELS.recentClear]() {
      await deps.settings.update((s) => ({ ...s, recent: [] }));
    },
    async [CHANNELS.editorGet]() {
      return (await deps.settings.load()).editor ?? DEFAULT_EDITOR;
    },
    async [CHANNELS.editorSet](e: unknown) {
      if (!isEditor(e)) throw new AccessError('not an editor heaplens knows');
      const s = await deps.settings.update((s) => ({ ...s, editor: e }));
      return s.editor ?? DEFAULT_EDITOR;
    },
    // only a file link of the editor chosen, built here from an absolute path and a line: the page names no URL
    async [CHANNELS.editorOpen](file: unknown, line: unknown) {
      if (typeof file !== 'string' || typeof line !== 'number') throw new AccessError('a path and a line');
      const url = editorUrl((await deps.settings.load()).editor ?? DEFAULT_EDITOR, file, line);
      if (url === null || !deps.openExternal) return false;
      await deps.openExternal(url);
      return true;
    },
  };
}
