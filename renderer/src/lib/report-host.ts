// The host of a single-file report's page: no file access at all (nothing is read; the job is embedded),
// nothing autosaved; exports (PNG, JSON) are downloads. The analysis runs in-page over the embedded job.

import type { Host } from './host.ts';
import { inPageWorker } from './in-page-worker.ts';
import { browserSaveDownload } from './download.ts';

export function reportHost(): Host {
  const none = async () => [];
  return {
    kind: 'report',
    engine: 'in-page',
    dataset: null,
    editor: null,
    spawnWorker: inPageWorker,
    filesFromDrop: none,
    filesFromInput: () => [],
    openDialog: () => Promise.resolve(null),
    readChunk: null,
    sampleFiles: none,
    save: browserSaveDownload,
    symbolFiles: none,
    symbolPaths: null,
    recent: null,
    session: {
      save: async () => null,
      autosave: async () => undefined,
      readAutosave: async () => null,
      forgetAutosave: () => undefined,
      opened: () => undefined,
      reset: () => undefined,
      openPaths: null,
    },
    readText: () => Promise.reject(new Error('a report reads no files')),
    onMenu: () => () => undefined,
    onOpenRequest: () => () => undefined,
  };
}
