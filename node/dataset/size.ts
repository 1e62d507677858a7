// Bytes a dataset takes on disk (what must be copied off the cluster).

import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';

export async function datasetSize(dir: string): Promise<{ size: number; files: number }> {
  let size = 0;
  let files = 0;
  const walk = async (d: string): Promise<void> => {
    for (const e of await readdir(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) await walk(p);
      else {
        size += (await stat(p)).size;
        files++;
      }
    }
  };
  await walk(dir);
  return { size, files };
}
