// Recent sessions, symbol search paths and the editor frames open in, kept in one small JSON file in the user-data
// folder.

import { readFile, mkdir, stat } from 'node:fs/promises';
import path from 'node:path';
import type { RecentSession } from './host-api.js';
import { DEFAULT_EDITOR, isEditor, type Editor } from './editor-link.js';
import type { FileAccess } from './file-access.js';
import { writeFileAtomic, type AtomicWriteHooks } from './session-store.js';

export const MAX_RECENT = 12;

export interface Settings {
  recent: RecentSession[];
  symbolPaths: string[];
  /** the editor a frame's file:line opens in (editor-link.ts); absent from older files: VS Code */
  editor?: Editor;
}

export function emptySettings(): Settings {
  return { recent: [], symbolPaths: [] };
}

function isStringArray(v: unknown): v is string[] {
  return Array.isArray(v) && v.every((s) => typeof s === 'string');
}

/** Parses the settings file defensively: anything malformed is dropped, never thrown. */
export function parseSettings(text: string): Settings {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return emptySettings();
  }
  const s = emptySettings();
  if (typeof raw !== 'object' || raw === null) return s;
  const o = raw as Record<string, unknown>;
  if (Array.isArray(o.recent)) {
    for (const r of o.recent) {
      if (typeof r !== 'object' || r === null) continue;
      const e = r as Record<string, unknown>;
      if (
        isStringArray(e.paths) &&
        e.paths.length > 0 &&
        typeof e.label === 'string' &&
        typeof e.openedAt === 'number'
      ) {
        s.recent.push({ paths: e.paths, label: e.label, openedAt: e.openedAt });
      }
    }
    s.recent = s.recent.slice(0, MAX_RECENT);
  }
  if (isStringArray(o.symbolPaths)) s.symbolPaths = [...new Set(o.symbolPaths.filter((p) => path.isAbsolute(p)))];
  if (isEditor(o.editor) && o.editor !== DEFAULT_EDITOR) s.editor = o.editor;
  return s;
}

export function sessionLabel(paths: string[]): string {
  const first = path.basename(paths[0] ?? '') || (paths[0] ?? '');
  return paths.length > 1 ? `${first} (+${paths.length - 1})` : first;
}

/** Puts a session first, removing an older entry with the same paths; keeps at most MAX_RECENT. */
export function addRecent(list: RecentSession[], paths: string[], now: number): RecentSession[] {
  const key = JSON.stringify([...paths].sort());
  const rest = list.filter((r) => JSON.stringify([...r.paths].sort()) !== key);
  return [{ paths: [...paths], label: sessionLabel(paths), openedAt: now }, ...rest].slice(0, MAX_RECENT);
}

export function addSymbolPath(list: string[], p: string): string[] {
  return list.includes(p) ? list : [...list, p];
}

export function removeSymbolPath(list: string[], p: string): string[] {
  return list.filter((x) => x !== p);
}

export class SettingsStore {
  private cache: Settings | null = null;
  /** hooks: for tests of a write that fails before the rename (a full disk) */
  constructor(
    private readonly file: string,
    private readonly hooks: AtomicWriteHooks = {},
  ) {}

  async load(): Promise<Settings> {
    if (this.cache) return this.cache;
    try {
      this.cache = parseSettings(await readFile(this.file, 'utf8'));
    } catch {
      this.cache = emptySettings();
    }
    return this.cache;
  }

  async update(fn: (s: Settings) => Settings): Promise<Settings> {
    const next = fn(await this.load());
    await mkdir(path.dirname(this.file), { recursive: true });
    // atomic: a full disk (ENOSPC) or a crash mid-write leaves the previous settings whole
    await writeFileAtomic(this.file, JSON.stringify(next, null, 2), this.hooks);
    this.cache = next;
    return next;
  }
}

/**
 * After a restart the grants are gone but settings.json still lists the symbol folders: grant them again
 * (folders that no longer exist are skipped), or the symbolizer silently finds nothing in them.
 */
export async function regrantSymbolPaths(settings: SettingsStore, files: FileAccess): Promise<string[]> {
  const granted: string[] = [];
  for (const p of (await settings.load()).symbolPaths) {
    try {
      if (!(await stat(p)).isDirectory()) continue;
      granted.push(await files.grant(p));
    } catch {
      // gone or unreadable: kept in the list (the drive may be back later), not granted
    }
  }
  return granted;
}
