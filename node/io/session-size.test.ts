// Session files are size-checked before they are read (issue 13, item 9): a 600 MB file used to cost 586 MB.
import { mkdtempSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadSessionFile } from './session-file.js';
import { AUTOSAVE_NAME, SessionStore } from '../../app/session-store.js';
import { MAX_SESSION_BYTES } from '../../core/notes/validate.js';

/** A sparse file of the given size: costs no disk, and reading it would cost its size in memory. */
function sparse(path: string, bytes: number): string {
  writeFileSync(path, '{"format":"heaplens-session",');
  truncateSync(path, bytes);
  return path;
}

describe('session size before reading', () => {
  const dir = mkdtempSync(join(tmpdir(), 'heaplens-big-session-'));

  it("the CLI's loadSessionFile refuses a 600 MB file without reading it", async () => {
    const f = sparse(join(dir, 'big.heaplens-session.json'), 600 * 1024 * 1024);
    const rss0 = process.memoryUsage().rss;
    await expect(loadSessionFile(f)).rejects.toThrow(
      new RegExp(`of ${600 * 1024 * 1024} bytes is larger than the ${MAX_SESSION_BYTES}`),
    );
    expect(process.memoryUsage().rss - rss0).toBeLessThan(100 * 1024 * 1024);
  });

  it("the app's autosave reader skips an oversized autosave file without reading it", async () => {
    sparse(join(dir, AUTOSAVE_NAME), 600 * 1024 * 1024);
    const rss0 = process.memoryUsage().rss;
    expect(await new SessionStore(dir).readAutosave()).toBeNull();
    expect(process.memoryUsage().rss - rss0).toBeLessThan(100 * 1024 * 1024);
  });
});
