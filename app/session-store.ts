// Session files from the main process: explicit saves (to the path the save dialog returned, then "the current
// session file" of the window) and autosaves (to the current session file, else the job's <userData>/autosave-<job>.heaplens.json),
// always written atomically: temp file in the same folder, fsync, rename over the old file, fsync of the folder.
// The same procedure as node/io/session-file.ts (the app's tsconfig and import rules keep app/ self-contained,
// so it is repeated here rather than imported). The renderer validates sessions (core/notes/validate.ts); main only
// checks that the text is a bounded heaplens-session JSON document, so it never writes arbitrary data.

import { open, readdir, readFile, rename, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import { randomBytes } from 'node:crypto';

/** Largest session text main accepts (core/notes/validate.ts LIMITS.fileChars). */
export const MAX_SESSION_CHARS = 64 * 1024 * 1024;
export const AUTOSAVE_NAME = 'autosave.heaplens.json';

export class SessionStoreError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SessionStoreError';
  }
}

/** The text must be a JSON object with format "heaplens-session" and readOnly not true. */
export function checkSessionText(text: unknown): string {
  if (typeof text !== 'string') throw new SessionStoreError('session text must be a string');
  if (text.length > MAX_SESSION_CHARS) throw new SessionStoreError('session text too large');
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    throw new SessionStoreError('session text is not JSON');
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v))
    throw new SessionStoreError('session text is not a JSON object');
  const o = v as Record<string, unknown>;
  if (o.format !== 'heaplens-session') throw new SessionStoreError('not a heaplens session');
  if (o.readOnly === true) throw new SessionStoreError('a read-only session (opened from a report) is not saved');
  return text;
}

export interface AtomicWriteHooks {
  /** after the temp file is written and synced, before the rename (tests crash here) */
  beforeRename?: (tmp: string) => void | Promise<void>;
}

/** Readers see the old file or the whole new one, never a part. */
export async function writeFileAtomic(
  file: string,
  text: string | Uint8Array,
  hooks: AtomicWriteHooks = {},
): Promise<void> {
  const bytes = typeof text === 'string' ? new TextEncoder().encode(text) : text;
  const dir = path.dirname(file);
  const tmp = path.join(dir, `.${path.basename(file)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
  let mode = 0o644;
  try {
    mode = (await stat(file)).mode & 0o777;
  } catch {
    // new file
  }
  const fh = await open(tmp, 'wx', mode);
  let renamed = false;
  try {
    for (let off = 0; off < bytes.length;) {
      const { bytesWritten } = await fh.write(bytes, off, Math.min(1 << 20, bytes.length - off));
      off += bytesWritten;
    }
    await fh.sync();
    await fh.close();
    await hooks.beforeRename?.(tmp);
    await rename(tmp, file);
    renamed = true;
    try {
      const d = await open(dir, 'r');
      await d.sync().catch(() => undefined);
      await d.close();
    } catch {
      // folders cannot be synced on some platforms
    }
  } finally {
    if (!renamed) {
      await fh.close().catch(() => undefined);
      await unlink(tmp).catch(() => undefined);
    }
  }
}

/** Where a window's session goes: the file it was last saved to / opened from, else the autosave file. */
export class SessionStore {
  current: string | null = null;

  constructor(
    readonly userDataDir: string,
    private readonly write: (file: string, text: string) => Promise<void> = writeFileAtomic,
  ) {}

  get autosavePath(): string {
    return path.join(this.userDataDir, AUTOSAVE_NAME);
  }

  /** Explicit save to `file` (a path the save dialog returned); it becomes the current session file. */
  async saveTo(file: string, text: unknown): Promise<string> {
    const t = checkSessionText(text);
    if (!path.isAbsolute(file)) throw new SessionStoreError('session path must be absolute');
    await this.write(file, t);
    this.current = file;
    return file;
  }

  /** The autosave file of a job (its key, 16 hex digits, from the renderer): one per job, so a second job never
   *  overwrites the first's; anything else → the shared autosave file. */
  autosavePathFor(job: unknown): string {
    return typeof job === 'string' && /^[0-9a-f]{16}$/.test(job)
      ? path.join(this.userDataDir, `autosave-${job}.heaplens.json`)
      : this.autosavePath;
  }

  /** Autosave: the current session file, or the job's autosave file when the session was never saved. */
  async autosave(text: unknown, job: unknown = ''): Promise<string> {
    const t = checkSessionText(text);
    const file = this.current ?? this.autosavePathFor(job);
    await this.write(file, t);
    return file;
  }

  /** The most recent autosave of any job (when no explicit session file was used), or null. */
  async readAutosave(): Promise<string | null> {
    let newest: { file: string; mtime: number } | null = null;
    try {
      for (const name of await readdir(this.userDataDir)) {
        if (!/^autosave(-[0-9a-f]{16})?\.heaplens\.json$/.test(name)) continue;
        const file = path.join(this.userDataDir, name);
        // size and kind first: a huge file is never read, a FIFO never blocks the read
        const st = await stat(file);
        if (!st.isFile() || st.size > MAX_SESSION_CHARS) continue;
        if (!newest || st.mtimeMs > newest.mtime) newest = { file, mtime: st.mtimeMs };
      }
      if (!newest) return null;
      const t = await readFile(newest.file, 'utf8');
      return t.length > MAX_SESSION_CHARS ? null : t;
    } catch {
      return null;
    }
  }

  /** A session opened from a file: later saves and autosaves go there. */
  opened(file: unknown): void {
    if (typeof file === 'string' && path.isAbsolute(file) && /\.json$/i.test(file)) this.current = file;
  }

  /** A new job or a closed one: autosaves go to the autosave file again. */
  reset(): void {
    this.current = null;
  }
}
