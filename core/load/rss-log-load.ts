// Reads the RSS log CSVs among the side files (core/formats/rss-log.ts); a CSV that is not an RSS log is
// named in a warning and skipped.
import { parseRssLog, type RssLog } from '../formats/rss-log.js';
import type { InputFile } from '../formats/input-file.js';
import type { SideFile } from '../formats/dump-filename.js';
import type { LoadWarning } from '../model/model.js';

/** Logs above this are read only up to it (a row is ~40 bytes: 1.6 M rows). */
const MAX_RSS_LOG_BYTES = 64 * 1024 * 1024;

export async function readRssLogs(
  side: readonly { file: InputFile; side: SideFile }[],
  warnings: LoadWarning[],
): Promise<{ file: string; log: RssLog }[]> {
  const out: { file: string; log: RssLog }[] = [];
  for (const { file, side: s } of side) {
    if (s.kind !== 'rss-log') continue;
    try {
      const text = new TextDecoder('utf-8').decode(await file.read(0, Math.min(file.size, MAX_RSS_LOG_BYTES)));
      const log = parseRssLog(text);
      if (!log) {
        warnings.push({
          file: file.path,
          line: 1,
          message: 'CSV without a time and an RSS column in its header (see docs/formats.md, "RSS log"): ignored',
        });
        continue;
      }
      if (file.size > MAX_RSS_LOG_BYTES)
        warnings.push({ file: file.path, message: `only the first ${MAX_RSS_LOG_BYTES} bytes were read` });
      out.push({ file: file.path, log });
    } catch (e) {
      warnings.push({ file: file.path, message: `could not be read: ${e instanceof Error ? e.message : String(e)}` });
    }
  }
  return out;
}
