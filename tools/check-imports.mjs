#!/usr/bin/env node
// Checks the structure of the tree:
// 1. the direction of imports between rooms (core/formats → core/model → … → core/query → front-ends): each room
//    may import only the rooms listed for it;
// 2. the pure core (core/**) uses no Node API, so the browser worker, the report page and Node all run it;
// 3. no import cycle between files, inside a room too (Perfetto's checker leaves this out; it is what lets a
//    dispatcher and its commands, or two stores, quietly import each other).
// Tests (*.test.ts) and tools/ may use Node and import across rooms (they are integration points), but they join
// no cycle check. Exit 1 with file:line for every violation.
import { readFileSync, readdirSync, statSync, existsSync } from 'node:fs';
import { join, relative, resolve, dirname } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const CORE = [
  'formats',
  'model',
  'symbolize',
  'frames',
  'load',
  'stats',
  'query',
  'notes',
  'export',
  'report',
  'engine',
].map((r) => `core/${r}`);
/** room → rooms it may import from (itself always allowed). A room is core/<x>, node/<x> or a top-level folder. */
const ALLOWED = {
  'core/formats': [],
  'core/model': ['core/formats'],
  'core/symbolize': ['core/model', 'core/formats'],
  'core/frames': ['core/symbolize', 'core/model', 'core/formats'],
  'core/load': ['core/frames', 'core/symbolize', 'core/model', 'core/formats'],
  'core/stats': ['core/frames', 'core/symbolize', 'core/model', 'core/formats'],
  'core/notes': ['core/model', 'core/formats'],
  'core/query': [
    'core/stats',
    'core/load',
    'core/frames',
    'core/symbolize',
    'core/notes',
    'core/model',
    'core/formats',
  ],
  'core/export': ['core/query', 'core/stats', 'core/frames', 'core/symbolize', 'core/model', 'core/formats'],
  'core/report': [
    'core/export',
    'core/query',
    'core/notes',
    'core/stats',
    'core/frames',
    'core/symbolize',
    'core/model',
    'core/formats',
  ],
  // The engine's API and its one answer to each request: every transport (worker, report page, Node) calls it.
  'core/engine': [
    'core/report',
    'core/export',
    'core/query',
    'core/notes',
    'core/stats',
    'core/load',
    'core/frames',
    'core/symbolize',
    'core/model',
    'core/formats',
  ],
  // Node only: file I/O, the DuckDB datasets (a native addon), the CLI. They run the core, never the renderer.
  'node/io': CORE,
  'node/dataset': [...CORE, 'node/io'],
  // The engine served from Node (`heaplens open`, the desktop app's utility process) and opening a job from paths.
  'node/engine': [...CORE, 'node/io', 'node/dataset'],
  'node/cli': [...CORE, 'node/io', 'node/dataset', 'node/engine'],
  // The renderer runs the core in its worker and in the report page; never node/.
  renderer: CORE,
  // The Electron main process: thin; it opens datasets for the renderer.
  app: ['node/dataset', 'node/engine'],
};
const NODE_MODULE = /^(node:|fs$|path$|os$|child_process$|url$|zlib$|crypto$|worker_threads$)/;

function roomOf(rel) {
  const parts = rel.split('/');
  if ((parts[0] === 'core' || parts[0] === 'node') && parts.length > 2) return `${parts[0]}/${parts[1]}`;
  return parts[0];
}

const problems = [];
/** product file → the product files it imports statically or dynamically (for the cycle check) */
const graph = new Map();
const lineOf = new Map();

function walk(dir) {
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name.startsWith('.')) continue;
    const full = join(dir, name);
    if (statSync(full).isDirectory()) walk(full);
    else if (/\.(ts|mts|cts|svelte)$/.test(name)) check(full);
  }
}
function targetFile(from, spec) {
  const abs = resolve(dirname(from), spec);
  for (const c of [abs, abs.replace(/\.js$/, '.ts'), abs.replace(/\.cjs$/, '.cts'), abs + '.ts'])
    if (existsSync(c) && statSync(c).isFile()) return relative(root, c);
  return null;
}
function check(file) {
  const rel = relative(root, file);
  const top = roomOf(rel);
  const isTest = /\.test\.ts$/.test(file) || rel.startsWith('tools/');
  const pure = top.startsWith('core/');
  const text = readFileSync(file, 'utf8');
  const edges = [];
  // Whole-text scan: an import's names may span lines (`import {\n a,\n b,\n} from './x.js'`).
  const re =
    /(?:^|[\n;])\s*(?:import|export)\s(?:[^'";]*?\sfrom\s*)?['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]\s*\)/g;
  for (const m of text.matchAll(re)) {
    const spec = m[1] ?? m[2];
    const line = text.slice(0, m.index + m[0].length).split('\n').length;
    if (spec.startsWith('.')) {
      const t = targetFile(file, spec);
      if (t && !isTest && !/\.test\.ts$/.test(t)) {
        edges.push(t);
        lineOf.set(`${rel}→${t}`, line);
      }
      const target = roomOf(relative(root, resolve(dirname(file), spec)));
      if (target === top || target.startsWith('..')) continue;
      if (isTest) continue;
      // The preload API's types are the one contract the renderer shares with the Electron shell.
      if (top === 'renderer' && /\/app\/host-api(\.ts|\.js)?$/.test(spec)) continue;
      if (!(ALLOWED[top] ?? []).includes(target))
        problems.push(`${rel}:${line}: ${top}/ may not import from ${target}/ (${spec})`);
    } else if (pure && !isTest && NODE_MODULE.test(spec)) {
      problems.push(`${rel}:${line}: ${top}/ must run in a browser worker: no Node module (${spec})`);
    }
  }
  if (!isTest) graph.set(rel, edges);
}
for (const top of ['core', 'node', 'renderer', 'app']) {
  try {
    walk(join(root, top));
  } catch (e) {
    if (e.code !== 'ENOENT') throw e;
  }
}
// Folders that are not rooms of the table hold no product code.
for (const name of readdirSync(root)) {
  if (['parsers', 'analysis', 'symbolize', 'session', 'report', 'export', 'node-io', 'dataset', 'cli'].includes(name))
    problems.push(`${name}/: the old layout; its code belongs in core/ or node/ (see README "Layout")`);
}

// Cycles between files: Tarjan's strongly connected components over the product import graph.
let index = 0;
const idx = new Map();
const low = new Map();
const stack = [];
const onStack = new Set();
const cycles = [];
function strong(v) {
  idx.set(v, index);
  low.set(v, index);
  index++;
  stack.push(v);
  onStack.add(v);
  for (const w of graph.get(v) ?? []) {
    if (!graph.has(w)) continue;
    if (!idx.has(w)) {
      strong(w);
      low.set(v, Math.min(low.get(v), low.get(w)));
    } else if (onStack.has(w)) low.set(v, Math.min(low.get(v), idx.get(w)));
  }
  if (low.get(v) === idx.get(v)) {
    const comp = [];
    let w;
    do {
      w = stack.pop();
      onStack.delete(w);
      comp.push(w);
    } while (w !== v);
    if (comp.length > 1 || (graph.get(v) ?? []).includes(v)) cycles.push(comp);
  }
}
for (const v of graph.keys()) if (!idx.has(v)) strong(v);
for (const comp of cycles) {
  const inComp = new Set(comp);
  const where = comp
    .flatMap((a) =>
      (graph.get(a) ?? []).filter((b) => inComp.has(b)).map((b) => `${a}:${lineOf.get(`${a}→${b}`)} → ${b}`),
    )
    .join('; ');
  problems.push(`import cycle between ${comp.length} files: ${where}`);
}

if (problems.length) {
  console.error(problems.join('\n'));
  console.error(`check-imports: ${problems.length} problem(s) against the direction table and the no-cycle rule`);
  process.exit(1);
}
console.log(`check-imports: ok (${graph.size} files, no cycles)`);
