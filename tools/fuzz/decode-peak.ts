// A child process that decodes one compressed file through decodedChunks and prints, as one JSON line, what came
// out, the stop message and its peak resident memory over its own start: the decoders' memory cannot be sampled
// from inside (one decoder step is synchronous), and a separate process's maxRSS is not raised by other tests.
// Usage: node --import tsx tools/fuzz/decode-peak.ts <file>
import { statSync } from 'node:fs';
import { nodeInputFile } from '../../node/io/node-files.js';
import { codecOf, decodedChunks, DecodeProblem } from '../../core/formats/decompress.js';

export interface DecodePeak {
  codec: string | null;
  /** bytes given before the stop */
  out: number;
  /** the DecodeProblem's message, or null when the whole stream decoded */
  problem: string | null;
  /** bytes of maxRSS above the one after loading the decoders */
  peakGrowth: number;
  ms: number;
}

async function main(path: string): Promise<DecodePeak> {
  const file = nodeInputFile(path, path, statSync(path).size, null);
  const codec = codecOf(await file.read(0, 8));
  // the decoders' packages loaded before the baseline (they load on first use)
  await Promise.all([import('fzstd'), import('unbzip2-stream/lib/bzip2.js'), import('xz-decompress'), import('pako')]);
  const base = process.resourceUsage().maxRSS * 1024;
  const t0 = performance.now();
  let out = 0;
  let problem: string | null = null;
  if (codec)
    try {
      for await (const c of decodedChunks(file, codec)) out += c.length;
    } catch (e) {
      if (!(e instanceof DecodeProblem)) throw e;
      problem = e.message;
    }
  return {
    codec,
    out,
    problem,
    peakGrowth: process.resourceUsage().maxRSS * 1024 - base,
    ms: Math.round(performance.now() - t0),
  };
}

main(process.argv[2]).then(
  (r) => console.log(JSON.stringify(r)),
  (e: unknown) => {
    console.error(e instanceof Error ? (e.stack ?? e.message) : String(e));
    process.exit(1);
  },
);
