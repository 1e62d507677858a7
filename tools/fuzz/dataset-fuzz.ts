// Dataset fuzzing (issue 24): a copied dataset is untrusted input. fixtures/jemalloc/job is ingested once; each
// case copies it, damages one Parquet file (byte flips, or one column rewritten through DuckDB with absurd values),
// then runs `summary`, `top`, `growth` and a re-ingest into the copy in-process. A case fails on a thrown error or a
// stack in the output (an internal error), a hang (the per-case budget), a non-finite or absurd figure in the output,
// or any file outside the copy created, removed, resized or rewritten.

import { cp, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { runCaptured, type Captured } from '../../node/cli/run-captured.js';
import { openEngine, sqlString } from '../../node/dataset/duckdb.js';
import { parquetPathSql } from '../../node/dataset/tree-check.js';
import { type Rng } from './mutate.js';

const ROOT = resolve(import.meta.dirname, '..', '..');
export const DATASET_INPUT = join(ROOT, 'fixtures', 'jemalloc', 'job');

export interface DatasetFuzz {
  /** the folder holding the pristine dataset and every case's copy */
  parent: string;
  pristine: string;
  parquet: string[];
  close(): Promise<void>;
}

export async function prepareDatasetFuzz(): Promise<DatasetFuzz> {
  const parent = await mkdtemp(join(tmpdir(), 'heaplens-fuzz-ds-'));
  const pristine = join(parent, 'pristine');
  const r = await runCaptured('ingest', DATASET_INPUT, '-o', pristine, '--no-symbols');
  if (r.code !== 0) throw new Error(`ingest of ${DATASET_INPUT} exited ${r.code}: ${r.err}`);
  const parquet = (await readdir(pristine, { recursive: true })).filter((f) => f.endsWith('.parquet')).sort();
  return { parent, pristine, parquet, close: () => rm(parent, { recursive: true, force: true }) };
}

/** Every file and folder under the given roots (but not under `skip`) with size and mtime: what a case may not touch. */
async function listing(roots: string[], skip: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const root of roots)
    for (const e of await readdir(root, { recursive: true, withFileTypes: true })) {
      const p = join(e.parentPath, e.name);
      if (p === skip || p.startsWith(skip + '/')) continue;
      const s = await stat(p).catch(() => null);
      out.set(p, s === null ? 'gone' : `${e.isDirectory() ? 'dir' : s.size} ${s.mtimeMs}`);
    }
  return out;
}

/** Values out of every column type's sensible range, by DuckDB type; other types get NULL. */
function absurdValues(type: string): string[] {
  const t = type.toUpperCase();
  if (/^(U?BIGINT|U?INTEGER|U?SMALLINT|U?TINYINT|HUGEINT)$/.test(t)) {
    const signed = !t.startsWith('U');
    return [...(signed ? [`(-1)::${t}`, `(-${bigOf(t)} - 1)::${t}`] : []), `0::${t}`, `${bigOf(t)}::${t}`, 'NULL'];
  }
  if (/^(DOUBLE|FLOAT|REAL)$/.test(t))
    return [`'NaN'::${t}`, `'Infinity'::${t}`, `-1e300::${t}`, `-3e38::${t}`, 'NULL'];
  if (t === 'BOOLEAN') return ['NULL', 'true'];
  if (t === 'VARCHAR')
    return [
      sqlString(''),
      sqlString('{'),
      sqlString('null'),
      sqlString('[1,2'),
      sqlString('{"a":NaN}'),
      sqlString('-1'),
      sqlString('1e309'),
      sqlString('x'.repeat(20_000)),
      sqlString('\u202e\u001b[2J'),
      'NULL',
    ];
  if (t.startsWith('TIMESTAMP')) return [`TIMESTAMP '0001-01-01'`, `TIMESTAMP '294000-01-01'`, 'NULL'];
  return ['NULL'];
}

/** The largest value of an integer type, as text. */
function bigOf(t: string): string {
  const bits: Record<string, number> = { TINYINT: 8, SMALLINT: 16, INTEGER: 32, BIGINT: 64, HUGEINT: 128 };
  const u = t.startsWith('U');
  const n = bits[u ? t.slice(1) : t];
  return (2n ** BigInt(u ? n : n - 1) - 1n).toString();
}

/** One column of one Parquet file rewritten: every row, or every k-th row, gets an absurd value of its type. */
async function editColumn(file: string, rng: Rng): Promise<string> {
  const e = await openEngine([dirname(file)]);
  try {
    const cols = (
      await (await e.con.run(`DESCRIBE SELECT * FROM read_parquet(${parquetPathSql(file)})`)).getRows()
    ).map((r) => [String(r[0]), String(r[1])] as const);
    const [name, type] = rng.pick(cols);
    const value = rng.pick(absurdValues(type));
    const k = rng.pick([1, 2, 7]);
    const q = `"${name.replace(/"/g, '""')}"`;
    await e.con.run(
      `COPY (SELECT * EXCLUDE (__rn) REPLACE (CASE WHEN __rn % ${k} = 0 THEN ${value} ELSE ${q} END AS ${q})
         FROM (SELECT *, row_number() OVER () AS __rn FROM read_parquet(${parquetPathSql(file)})))
       TO ${sqlString(file + '.new')} (FORMAT parquet)`,
    );
    await cp(file + '.new', file);
    await rm(file + '.new');
    return `column ${name} (${type}) = ${value.length > 40 ? value.slice(0, 40) + '…' : value} every ${k} rows`;
  } finally {
    e.close();
  }
}

/** 1–8 bits flipped anywhere, or within the footer (the schema and row-group offsets); sometimes truncated. */
async function flipBytes(file: string, rng: Rng): Promise<string> {
  const b = new Uint8Array(await readFile(file));
  const footer = rng.int(2) === 0;
  const at: number[] = [];
  for (let j = 0, m = 1 + rng.int(8); j < m; j++) {
    const i = footer ? b.length - 1 - rng.int(Math.min(b.length, 512)) : rng.int(b.length);
    b[i] ^= 1 << rng.int(8);
    at.push(i);
  }
  const cut = rng.int(8) === 0 ? rng.int(b.length) : b.length;
  await writeFile(file, b.subarray(0, cut));
  return `bits flipped at ${at.join(', ')}${cut < b.length ? `, cut at ${cut}` : ''}`;
}

class Broken extends Error {}

/** Every number in a command's JSON output is finite and within 2^64. */
function checkJsonFigures(v: unknown, at: string): void {
  if (typeof v === 'string' && /^-?(NaN|Infinity)$/.test(v) && !/\.(z|lateZ)$/.test(at))
    throw new Broken(`${at}: ${v}`);
  if (typeof v === 'number') {
    if (!Number.isFinite(v) || Math.abs(v) > 2 ** 64) throw new Broken(`${at}: ${v}`);
    return;
  }
  if (typeof v !== 'object' || v === null) return;
  for (const [k, x] of Object.entries(v)) checkJsonFigures(x, `${at}.${k}`);
}

function checkRun(what: string, r: Captured, copy: string): void {
  const all = r.out + '\n' + r.err;
  if (/internal error|\n\s+at \S+ \(|\n\s+at file:/.test(all))
    throw new Broken(`${what}: a stack in the output: ${all.slice(0, 600)}`);
  if (r.code !== 0 && r.code !== 1) throw new Broken(`${what}: exit ${r.code}: ${r.err.slice(0, 300)}`);
  if (r.code === 1 && !r.err.includes(copy))
    throw new Broken(`${what}: an error naming no file of the dataset: ${r.err.slice(0, 300)}`);
  // Figures reaching output (a refusal on stderr may quote the damaged value; a name may hold any text). JSON: every
  // number, and no figure written as the string "NaN"/"Infinity" but growth's z and lateZ, ±∞ by design for an exact
  // non-zero change (core/query/growth.ts). Text: a non-finite or 21-digit figure before a unit.
  if (r.code === 0 && r.out.trimStart().startsWith('{')) checkJsonFigures(JSON.parse(r.out), what);
  else {
    const m = /(NaN|Infinity|\d{21,})\s*(B|KiB|MiB|GiB|TiB|PiB|EiB|%|objects)(?![\w])/.exec(r.out);
    if (m) throw new Broken(`${what}: an absurd figure: ${m[0]}`);
  }
}

async function race<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const t = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Broken(`${what}: no answer within ${ms} ms (a hang)`)), ms);
  });
  try {
    return await Promise.race([p, t]);
  } finally {
    clearTimeout(timer);
  }
}

/** One case; throws (naming the damage) when an invariant does not hold. Returns what was damaged. */
export async function datasetCase(fz: DatasetFuzz, i: number, rng: Rng, budgetMs: number): Promise<string> {
  const copy = join(fz.parent, `case-${i}`);
  await cp(fz.pristine, copy, { recursive: true });
  const rel = rng.pick(fz.parquet);
  const file = join(copy, rel);
  const damage = `${rel}: ${rng.int(2) === 0 ? await editColumn(file, rng) : await flipBytes(file, rng)}`;
  const before = await listing([fz.parent, DATASET_INPUT], copy);
  const id = `dataset case ${i}, ${damage}`;
  try {
    await race(
      (async () => {
        for (const argv of [
          ['summary', copy, '--json'],
          ['top', copy, '--json'],
          ['growth', copy, '--json'],
          ['summary', copy],
          ['ingest', DATASET_INPUT, '-o', copy, '--no-symbols'],
        ]) {
          let r: Captured;
          try {
            r = await runCaptured(...argv);
          } catch (e) {
            throw new Broken(`${argv[0]}: threw ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
          }
          checkRun(argv.join(' '), r, copy);
        }
      })(),
      budgetMs,
      'the commands',
    );
    const after = await listing([fz.parent, DATASET_INPUT], copy);
    const changed = [...new Set([...before.keys(), ...after.keys()])].filter((p) => before.get(p) !== after.get(p));
    if (changed.length > 0)
      throw new Broken(`files touched outside the dataset: ${changed.map((p) => relative(fz.parent, p)).join(', ')}`);
  } catch (e) {
    throw new Error(`${id}: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
  } finally {
    await rm(copy, { recursive: true, force: true });
  }
  return damage;
}
