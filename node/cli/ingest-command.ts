// `heaplens ingest <paths…> -o <dir>`: the job as a Parquet dataset (docs/dataset.md), symbolized as `top`
// would symbolize it. A re-run reads only dumps not yet in the dataset.

import type { Job, ProcessSeries } from '../../core/model/model.js';
import { collectInputFiles, type CollectProblem } from '../io/node-files.js';
import type { SymbolTable } from '../../core/symbolize/symbolize.js';
import { checkFlags, flag, has, UsageError, type ParsedArgs } from './args.js';
import { formatBytes } from './format.js';
import { prepareSymbols, SYMBOL_FLAGS, symbolizeJob, symbolTableOf } from './symbols.js';
import { MANIFEST_FILE } from '../dataset/manifest.js';
import { dirName } from '../../core/formats/dump-filename.js';

export async function ingestCommand(
  args: ParsedArgs,
  io: { out: (s: string) => void; err: (s: string) => void },
): Promise<number> {
  checkFlags(args, ['output', 'help', 'json', ...SYMBOL_FLAGS]);
  const out = flag(args, 'output');
  if (!out) throw new UsageError('"ingest" needs -o <dir>');
  if (args.positional.length === 0) throw new UsageError('"ingest" needs at least one file or folder');
  prepareSymbols(args);
  const problems: CollectProblem[] = [];
  const all = await collectInputFiles(args.positional, problems);
  for (const p of problems) io.err(`warning: ${p.path}: ${p.message}`);
  // A dataset inside the folders given (the output of an earlier run, say) is not input.
  const datasetDirs = all
    .filter((f) => f.path.endsWith(`/${MANIFEST_FILE}`) || f.path === MANIFEST_FILE)
    .map((f) => dirName(f.path));
  const files = all.filter(
    (f) =>
      !datasetDirs.some((d) => (d === '' ? /\.parquet$|^_heaplens\.json$/.test(f.path) : f.path.startsWith(`${d}/`))),
  );
  const { ingest, IngestError } = await import('../dataset/ingest.js');
  const { DatasetError } = await import('../dataset/read-dataset.js');
  const t0 = performance.now();
  const { withDumpLoader } = await import('./load-dumps.js');
  let result;
  try {
    result = await withDumpLoader((load) =>
      ingest(files, out, {
        // each process's dumps are parsed in parallel, one dump per task
        load: (f) => load(f),
        symbolize: has(args, 'no-symbols')
          ? undefined
          : async (job: Job) => {
              await symbolizeJob(job, args, io);
              const m = new Map<ProcessSeries, SymbolTable>();
              for (const p of job.processes) {
                const t = symbolTableOf(p);
                if (t) m.set(p, t);
              }
              return m;
            },
        onProcess: (p) => {
          if (p.mode !== 'unchanged')
            io.err(`${p.mode === 'full' ? 'wrote' : 'appended'} ${p.key} (${p.dumps} dump${p.dumps === 1 ? '' : 's'})`);
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
  for (const w of result.warnings) io.err(`warning: ${w.file}${w.line ? `:${w.line}` : ''}: ${w.message}`);
  const { size } = await import('../dataset/size.js').then((m) => m.datasetSize(out));
  const seconds = ((performance.now() - t0) / 1000).toFixed(1);
  if (has(args, 'json'))
    io.out(JSON.stringify({ output: out, ...result, bytes: size, seconds: Number(seconds) }, null, 2));
  else {
    io.out(
      `${out}: ${result.dumpsRead} dump${result.dumpsRead === 1 ? '' : 's'} read, ${result.dumpsSkipped} already in the dataset; ` +
        `${result.processes.full} process${result.processes.full === 1 ? '' : 'es'} written, ${result.processes.append} appended, ${result.processes.unchanged} unchanged; ${formatBytes(size)} in ${seconds} s`,
    );
  }
  return 0;
}
