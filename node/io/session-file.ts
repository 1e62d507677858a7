// Session files on disk: written atomically (temp file in the same folder, fsync, rename, fsync the folder), so
// a crash or a full disk mid-write leaves the previous file whole; an autosaver that coalesces changes and never
// runs two writes at once.

import { open, readFile, rename, unlink, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { checkSessionFileSize, parseSession, serializeSession } from '../../core/notes/validate.js';
import type { Session } from '../../core/notes/schema.js';

export interface AtomicWriteOptions {
  /** bytes per write call (default 1 MiB) */
  chunkSize?: number;
  /** called after each chunk reaches the temp file (tests use it to crash mid-write) */
  onChunk?: (written: number, total: number) => void | Promise<void>;
  /** called after the temp file is complete and synced, before the rename */
  beforeRename?: () => void | Promise<void>;
}

/** Writes `data` to `path` so that readers see either the old file or the whole new one, never a part. */
export async function writeFileAtomic(
  path: string,
  data: string | Uint8Array,
  options: AtomicWriteOptions = {},
): Promise<void> {
  const bytes = typeof data === 'string' ? new TextEncoder().encode(data) : data;
  const dir = dirname(path);
  const tmp = join(dir, `.${basename(path)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
  let mode = 0o644;
  try {
    mode = (await stat(path)).mode & 0o777;
  } catch {
    // new file
  }
  const fh = await open(tmp, 'wx', mode);
  let renamed = false;
  try {
    const chunk = options.chunkSize ?? 1 << 20;
    for (let off = 0; off < bytes.length;) {
      const { bytesWritten } = await fh.write(bytes, off, Math.min(chunk, bytes.length - off));
      off += bytesWritten;
      await options.onChunk?.(off, bytes.length);
    }
    await fh.sync();
    await fh.close();
    await options.beforeRename?.();
    await rename(tmp, path);
    renamed = true;
    await syncDir(dir);
  } finally {
    if (!renamed) {
      await fh.close().catch(() => undefined);
      await unlink(tmp).catch(() => undefined);
    }
  }
}

/** fsync of the folder makes the rename itself durable (ignored where folders cannot be synced). */
async function syncDir(dir: string): Promise<void> {
  let fh;
  try {
    fh = await open(dir, 'r');
    await fh.sync();
  } catch {
    // e.g. EISDIR/EPERM/EINVAL on some platforms and file systems
  } finally {
    await fh?.close().catch(() => undefined);
  }
}

export async function saveSessionFile(
  path: string,
  session: Session,
  options: AtomicWriteOptions & { now?: Date } = {},
): Promise<void> {
  if (session.readOnly)
    throw new Error('a read-only session (opened from a report) is not saved; save a copy as a new session');
  await writeFileAtomic(path, serializeSession(session, options.now ?? new Date()), options);
}

/** Reads and validates a session file; throws SessionError / SessionVersionError (core/notes/validate.ts) when it is not one. */
export async function loadSessionFile(path: string): Promise<Session> {
  checkSessionFileSize((await stat(path)).size);
  return parseSession(await readFile(path, 'utf8'));
}

export interface AutosaveOptions {
  /** wait this long after the last change before writing (default 2 s) */
  delayMs?: number;
  onError?: (e: unknown) => void;
  onSaved?: (path: string) => void;
}

/**
 * Saves the session a while after it last changed. `changed()` after every edit; `flush()` before quitting.
 * Writes never overlap: a change during a write schedules one more write after it.
 */
export class SessionAutosaver {
  private timer: ReturnType<typeof setTimeout> | null = null;
  private running: Promise<void> | null = null;
  private dirty = false;
  private readonly delayMs: number;

  constructor(
    readonly path: string,
    private readonly current: () => Session,
    private readonly options: AutosaveOptions = {},
  ) {
    this.delayMs = options.delayMs ?? 2000;
  }

  changed(): void {
    this.dirty = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.flush();
    }, this.delayMs);
  }

  /** Writes now if anything changed since the last write; resolves when the file is on disk. */
  async flush(): Promise<void> {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    while (this.running) await this.running;
    if (!this.dirty) return;
    this.dirty = false;
    const session = this.current();
    if (session.readOnly) return;
    this.running = saveSessionFile(this.path, session).then(
      () => this.options.onSaved?.(this.path),
      (e: unknown) => {
        this.dirty = true;
        if (this.options.onError) this.options.onError(e);
        else throw e;
      },
    );
    try {
      await this.running;
    } finally {
      this.running = null;
    }
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}
