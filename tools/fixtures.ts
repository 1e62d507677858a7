// Test helpers: the committed real fixtures and their jeprof references.

import { cpSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { InputFile } from '../core/formats/input-file.js';
import { nodeInputFile } from '../node/io/node-files.js';

export const FIXTURES = resolve(import.meta.dirname, '..', 'fixtures', 'jemalloc');

export function fixturePath(rel: string): string {
  return join(FIXTURES, rel);
}

export function fixtureFile(rel: string): InputFile {
  const abs = fixturePath(rel);
  const st = statSync(abs);
  return nodeInputFile(abs, rel, st.size, st.mtimeMs);
}

export function fixtureFiles(dir: string): InputFile[] {
  return readdirSync(fixturePath(dir))
    .sort()
    .map((n) => fixtureFile(`${dir}/${n}`));
}

/** The single file in `dir` whose name matches. */
export function findFixture(dir: string, re: RegExp): string {
  const hits = readdirSync(fixturePath(dir)).filter((n) => re.test(n));
  if (hits.length !== 1) throw new Error(`expected one ${re} in ${dir}, found ${hits.length}`);
  return `${dir}/${hits[0]}`;
}

/** "<prefix>.<pid>" of a fixture job process, with the pid read from its file names (a fixture rebuild changes it). */
export function jobProcess(prefix: string): string {
  const hit = findFixture('job', new RegExp(`^${prefix}\\.\\d+\\.0\\.`));
  return hit.slice('job/'.length).split('.').slice(0, 2).join('.');
}

/**
 * `go tool pprof -raw`'s samples, each sample type's values summed (signed, as a delta profile keeps them), by the
 * type's name in its "Samples:" header (`inuse_space/bytes` → inuse_space).
 */
export function pprofRawSums(raw: string): Record<string, number> {
  const text = raw.split('\nLocations')[0];
  const types = /^Samples:\n(.*)$/m
    .exec(text)![1]
    .trim()
    .split(/\s+/)
    .map((t) => t.split('/')[0]);
  const sums: Record<string, number> = {};
  for (const m of text.matchAll(/^\s+(-?\d+(?:\s+-?\d+)*):/gm)) {
    const v = m[1].split(/\s+/).map(Number);
    if (v.length === types.length) types.forEach((t, i) => (sums[t] = (sums[t] ?? 0) + v[i]));
  }
  return sums;
}

/**
 * A copy of the captured fixture job (fixtures/job/dumps, recorded on host "vm") at `to`, as if it ran on
 * `host`: each sidecar's context names that host. A node of a multi-node job built from one real run.
 */
export function copyCapturedAsHost(to: string, host: string): void {
  cpSync(join(FIXTURES, '..', 'job', 'dumps'), to, { recursive: true });
  for (const f of readdirSync(to).filter((n) => n.endsWith('.pyframes'))) {
    const text = readFileSync(join(to, f), 'utf8');
    if (!/^C hostname vm$/m.test(text)) throw new Error(`${f}: no "C hostname vm" line to relabel`);
    writeFileSync(join(to, f), text.replace(/^C hostname vm$/m, `C hostname ${host}`));
  }
}

export interface JeprofTotals {
  inuseSpace: number;
  inuseObjects: number;
  allocSpace: number | null;
}

/** jeprof --text Totals per fixture dump (fixtures/jemalloc/references/jeprof-totals.tsv). */
export function jeprofTotals(): Map<string, JeprofTotals> {
  const lines = readFileSync(fixturePath('references/jeprof-totals.tsv'), 'utf8').trim().split('\n').slice(1);
  return new Map(
    lines.map((l) => {
      const [file, space, objects, alloc] = l.split('\t');
      return [
        file,
        { inuseSpace: Number(space), inuseObjects: Number(objects), allocSpace: alloc ? Number(alloc) : null },
      ];
    }),
  );
}

/** "Total: N B" of a jeprof --text report. */
export function jeprofReportTotal(rel: string): number {
  const m = /^Total: (-?[\d.]+) B/m.exec(readFileSync(fixturePath(rel), 'utf8'));
  if (!m) throw new Error(`no Total line in ${rel}`);
  return Number(m[1]);
}

/** One device in fixtures/torch/expected.json: what make-torch-snapshots.py counted from its simulated allocator. */
export interface TorchDeviceWant {
  device: number;
  segments: number;
  reserved_bytes: number;
  allocated_bytes: number;
  pending_free_bytes: number;
  inactive_bytes: number;
  active_by_leaf: Record<string, { bytes: number; blocks: number }>;
  peak_allocated_bytes: number;
  peak_reserved_bytes: number;
  ooms: { time_us: number; size: number; device_free: number }[];
  first_time_us: number;
  last_time_us: number;
}

export interface TorchWant {
  annotations: number;
  devices: TorchDeviceWant[];
  ring: { file: string; frees_before_alloc: number };
  /** the segment list alone, as torch.cuda.memory_snapshot() returns it */
  list: { file: string; segments: number };
  /** the snapshot with values no allocator writes (issue 46 S3, S6) */
  bounds: {
    oom_time: { file: string; oom_index: number };
    bounds: { file: string; huge_segments: number; far_devices: number; bad_times: number };
  };
  /** one training step recorded with stacks="all" (C++ frames) */
  cpp: {
    file: string;
    /** the step's trace kept only until its first free */
    rise_file: string;
    frames_before_python: number;
    before_recording_bytes: number;
    kept_by_step: Record<string, number>;
    peak_allocated_bytes: number;
    reserved_start: number;
    reserved_end: number;
    allocated_end: number;
    spans: [string, boolean][];
    first_time_us: number;
  };
}

/** fixtures/torch, and its expected.json. */
export const TORCH_FIXTURES = resolve(import.meta.dirname, '..', 'fixtures', 'torch');

export function torchExpected(): TorchWant {
  return JSON.parse(readFileSync(join(TORCH_FIXTURES, 'expected.json'), 'utf8')) as TorchWant;
}
