// A child process that loads files through the whole flow (loadJob: sniffing, decompression, the reader, the
// model) and prints, as one JSON line, what a fuzz case checks: the job's figures that break a bound, its warnings,
// the peak resident memory over its start and the time. Run under a heap limit by the caller, so a blow-up is an
// exit code, not a lost test run. Inputs are files, or a text generated on the fly and never stored:
//   node --import tsx tools/fuzz/load-peak.ts <file>...
//   node --import tsx tools/fuzz/load-peak.ts --generate <memleak|massif|dump> <MiB>
import { statSync } from 'node:fs';
import { basename } from 'node:path';
import { loadJob } from '../../core/load/load-job.js';
import type { InputFile } from '../../core/formats/input-file.js';
import { dateProblem, MAX_COUNT } from '../../core/formats/limits.js';
import { nodeInputFile } from '../../node/io/node-files.js';
import { generatedText } from './big-text.js';

export interface LoadPeak {
  processes: number;
  snapshots: number;
  /** figures past a bound: not finite, a size over 2^53, a time that is no date, a number printed as 1e+300 */
  broken: string[];
  warnings: { file: string; line?: number; byteOffset?: number; message: string }[];
  peakGrowth: number;
  ms: number;
}

const SIZE_KEYS = /^(bytes|objects|liveBytes|live|reserved|allocated|total|size)$/i;

/** Walks a result: every number finite, sizes ≤ 2^53, `…Ms` times dates; strings never a number in e-notation. */
function walk(v: unknown, at: string, out: string[], seen: Set<unknown>, depth = 0): void {
  if (out.length > 20) return;
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) out.push(`${at}: ${v}`);
    else if (/Ms$/.test(at) && dateProblem(v) !== null) out.push(`${at}: ${v} (${dateProblem(v)})`);
    else if (SIZE_KEYS.test(at.split('.').pop() ?? '') && (v < 0 || v > MAX_COUNT)) out.push(`${at}: ${v}`);
    return;
  }
  if (typeof v === 'string') {
    if (/\d[eE]\+\d/.test(v)) out.push(`${at}: "${v.slice(0, 60)}"`);
    return;
  }
  if (typeof v !== 'object' || v === null || depth > 10 || seen.has(v)) return;
  seen.add(v);
  if (ArrayBuffer.isView(v)) {
    const a = v as unknown as ArrayLike<number>;
    for (let i = 0; i < a.length; i++)
      if (typeof a[i] === 'number' && !Number.isFinite(a[i])) {
        out.push(`${at}[${i}]: ${a[i]}`);
        return;
      }
    return;
  }
  const entries = v instanceof Map ? [...v.entries()] : Object.entries(v);
  for (const [k, x] of entries.slice(0, 5000)) walk(x, `${at}.${String(k)}`, out, seen, depth + 1);
}

async function main(args: string[]): Promise<LoadPeak> {
  let files: InputFile[];
  if (args[0] === '--generate') files = [generatedText(args[1], Number(args[2]) * 1024 * 1024)];
  else files = args.map((p) => nodeInputFile(p, basename(p), statSync(p).size, null));
  const base = process.resourceUsage().maxRSS * 1024;
  const t0 = performance.now();
  const job = await loadJob(files);
  const broken: string[] = [];
  for (const p of job.processes) {
    walk(p.key, 'process.key', broken, new Set());
    for (const s of p.snapshots) {
      for (const [k, v] of Object.entries({
        ...s,
        stackIds: null,
        liveBytes: null,
        liveObjects: null,
        liveVarBytes: null,
      }))
        walk(v, `${s.file}.${k}`, broken, new Set());
      for (const col of [s.liveBytes, s.liveObjects, s.accumBytes, s.accumObjects])
        if (col) for (const x of col) if (!(x >= 0 && x <= MAX_COUNT)) broken.push(`${s.file}: cell ${x}`);
    }
  }
  if (job.evidence) walk(job.evidence, 'evidence', broken, new Set());
  return {
    processes: job.processes.length,
    snapshots: job.processes.reduce((a, p) => a + p.snapshots.length, 0),
    broken: broken.slice(0, 20),
    warnings: job.warnings.slice(0, 50).map((w) => ({ ...w, message: w.message.slice(0, 300) })),
    peakGrowth: process.resourceUsage().maxRSS * 1024 - base,
    ms: Math.round(performance.now() - t0),
  };
}

main(process.argv.slice(2)).then(
  (r) => console.log(JSON.stringify(r)),
  (e: unknown) => {
    console.error(`internal error: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
    process.exit(1);
  },
);
