// The first picture of a job, from the dump heads alone (core/formats/read-head.ts): every process with
// each snapshot's header total, grouped and ordered as loadJob will (same classify and grouping), so
// the app can draw every timeline while the records are still being read.

import type { InputFile } from '../formats/input-file.js';
import type { Inflater } from '../formats/inflate.js';
import { readDumpHead } from '../formats/read-head.js';
import type { Trigger } from '../formats/dump-types.js';
import { classifyFiles, groupProcesses, type ClassifiedFiles } from './load-job.js';
import { unbias } from '../model/unbias.js';

export interface PreviewSnapshot {
  file: string;
  seq: number | null;
  trigger: Trigger;
  /** the header's live bytes, unbiased as one record (as Snapshot.headerLiveBytes); null when unreadable */
  headerLiveBytes: number | null;
  /** the file's modification time, as the loader will see it */
  mtimeMs: number | null;
}

export interface PreviewProcess {
  key: string;
  pid: number | null;
  prefix: string;
  snapshots: PreviewSnapshot[];
}

export interface JobPreview {
  processes: PreviewProcess[];
  dumps: number;
}

// Heads read at once: each is one small read (an IPC round trip in the app), so many overlap.
const HEAD_CONCURRENCY = 32;

export async function previewJob(
  files: readonly InputFile[],
  options: {
    inflate?: Inflater | null;
    signal?: AbortSignal;
    /** `files` as the caller already sorted them (classifyFiles reads each file's first bytes: not twice) */
    classified?: ClassifiedFiles;
  } = {},
): Promise<JobPreview> {
  const classified = options.classified ?? (await classifyFiles(files));
  const groups = groupProcesses(classified.dumps);
  const processes: PreviewProcess[] = groups.map((g) => ({
    key: g.key,
    pid: g.pid,
    prefix: g.prefix,
    snapshots: g.dumps.map((d) => ({
      file: d.file.path,
      seq: d.name?.seq ?? null,
      trigger: d.name?.trigger ?? 'unknown',
      headerLiveBytes: null,
      mtimeMs: d.file.mtimeMs,
    })),
  }));
  const work = groups.flatMap((g, gi) =>
    g.dumps.map((d, di) => ({ file: d.file, head: d.head ?? null, snap: processes[gi].snapshots[di] })),
  );
  let next = 0;
  const worker = async () => {
    while (next < work.length) {
      options.signal?.throwIfAborted();
      const w = work[next++];
      try {
        // the first bytes the classify step read are the head's first read: each file read once before parsing
        const head = await readDumpHead(w.file, options.inflate ?? null, w.head);
        if (head.header)
          w.snap.headerLiveBytes = unbias(head.sampling, head.header.liveObjects, head.header.liveBytes).bytes;
      } catch {
        // unreadable: the full read reports it
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(HEAD_CONCURRENCY, work.length) }, worker));
  return { processes, dumps: work.length };
}
