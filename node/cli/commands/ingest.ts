// `heaplens ingest <paths…> -o <dir>`: the job as a Parquet dataset (docs/dataset.md), symbolized as `top`
// would symbolize it. A re-run reads only dumps not yet in the dataset.

import type { Job } from '../../../core/model/model.js';
import { dirName } from '../../../core/formats/dump-filename.js';
import { collectInputFiles, type CollectProblem } from '../../io/node-files.js';
import { MANIFEST_FILE } from '../../dataset/manifest.js';
import { flag, has, UsageError, type ParsedArgs } from '../args.js';
import { printWarnings, type Output } from '../common.js';
import { prepareSymbols, symbolizeJob } from '../symbols.js';
import { ingestProgress, ingestSummary } from '../text/written.js';

export async function ingestCommand(args: ParsedArgs, io: Output): Promise<number> {
  const out = flag(args, 'output');
  if (!out) throw new UsageError('"ingest" needs -o <dir>');
  if (args.positional.length === 0) throw new UsageError('"ingest" needs at least one file or folder');
  const host = flag(args, 'host');
  if (host !== undefined && !/^[^\s:/]{1,253}$/.test(host))
    throw new UsageError(`--host ${JSON.stringify(host)}: a host name (no spaces, colons or slashes)`);
  prepareSymbols(args);
  const problems: CollectProblem[] = [];
  const all = await collectInputFiles(args.positional, problems);
  printWarnings(
    problems.map((p) => ({ file: p.path, message: p.message })),
    io,
  );
  // A dataset inside the folders given (the output of an earlier run, say) is not input.
  const datasetDirs = all
    .filter((f) => f.path.endsWith(`/${MANIFEST_FILE}`) || f.path === MANIFEST_FILE)
    .map((f) => dirName(f.path));
  const files = all.filter(
    (f) =>
      !datasetDirs.some((d) => (d === '' ? /\.parquet$|^_heaplens\.json$/.test(f.path) : f.path.startsWith(`${d}/`))),
  );
  const { ingest, IngestError } = await import('../../dataset/ingest.js');
  const { DatasetError } = await import('../../dataset/read-dataset.js');
  const t0 = performance.now();
  const { withDumpLoader } = await import('../load-dumps.js');
  let result;
  try {
    result = await withDumpLoader((load) =>
      ingest(files, out, {
        // each process's dumps are parsed in parallel, one dump per task
        load: (f) => load(f),
        symbolize: has(args, 'no-symbols') ? undefined : (job: Job) => symbolizeJob(job, args, io),
        ...(host !== undefined ? { host } : {}),
        onProcess: (p) => {
          const line = ingestProgress(p);
          if (line) io.err(line);
        },
      }),
    );
  } catch (e) {
    if (e instanceof IngestError || e instanceof DatasetError) {
      io.err(`heaplens: ${e.message}`);
      return 1;
    }
    throw e;
  }
  printWarnings(result.warnings, io);
  const { size } = await import('../../dataset/size.js').then((m) => m.datasetSize(out));
  const seconds = ((performance.now() - t0) / 1000).toFixed(1);
  if (has(args, 'json'))
    io.out(JSON.stringify({ output: out, ...result, bytes: size, seconds: Number(seconds) }, null, 2));
  else io.out(ingestSummary(out, result, size, seconds));
  return 0;
}
