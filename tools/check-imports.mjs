#!/usr/bin/env node
// Checks the direction of imports between top-level folders (files → parsers → model → views):
// each folder may import only the folders listed for it, and the pure core may not use Node's APIs.
// Tests (*.test.ts) and test helpers may use Node and import across folders. Exit 1 with file:line for every violation.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative, resolve, dirname } from 'node:path';

const root = resolve(import.meta.dirname, '..');
/** folder → folders it may import from (itself always allowed) */
const ALLOWED = {
  parsers: [],
  analysis: ['parsers'],
  symbolize: ['parsers', 'analysis'],
  'node-io': ['parsers', 'analysis', 'symbolize', 'session'],
  cli: ['parsers', 'analysis', 'symbolize', 'node-io', 'export', 'session', 'report', 'dataset'],
  // Node only (DuckDB is a native addon): the CLI and the Electron main process use it, never the renderer.
  dataset: ['parsers', 'analysis', 'symbolize', 'node-io'],
  export: ['parsers', 'analysis', 'symbolize'],
  session: ['parsers', 'analysis'],
  report: ['parsers', 'analysis', 'symbolize', 'export', 'session'],
  renderer: ['parsers', 'analysis', 'symbolize', 'export', 'session', 'report'],
  app: ['dataset'],
};
/** folders whose non-test code must run in a browser worker too */
const PURE = new Set(['parsers', 'analysis', 'symbolize', 'export', 'session', 'report']);
const NODE_MODULE = /^(node:|fs$|path$|os$|child_process$|url$|zlib$|crypto$)/;

const problems = [];
function walk(dir) {
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name.startsWith('.')) continue;
    const full = join(dir, name);
    if (statSync(full).isDirectory()) walk(full);
    else if (/\.(ts|mts|cts|svelte)$/.test(name)) check(full);
  }
}
function check(file) {
  const rel = relative(root, file);
  const top = rel.split('/')[0];
  const isTest = /\.test\.ts$/.test(file) || rel.startsWith('tools/');
  const lines = readFileSync(file, 'utf8').split('\n');
  lines.forEach((line, i) => {
    const m =
      /^\s*(?:import|export)\s(?:[^'"]*\sfrom\s)?['"]([^'"]+)['"]/.exec(line) ??
      /\bimport\(\s*['"]([^'"]+)['"]\s*\)/.exec(line);
    if (!m) return;
    const spec = m[1];
    if (spec.startsWith('.')) {
      const target = relative(root, resolve(dirname(file), spec)).split('/')[0];
      if (target === top || target.startsWith('..')) return;
      // Tests are integration points (a model test may drive the CLI); the direction binds product code.
      if (isTest) return;
      // The preload API's types are the one contract the renderer shares with the Electron shell.
      if (top === 'renderer' && /\/app\/host-api(\.ts|\.js)?$/.test(spec)) return;
      if (!(ALLOWED[top] ?? []).includes(target))
        problems.push(`${rel}:${i + 1}: ${top}/ may not import from ${target}/ (${spec})`);
    } else if (PURE.has(top) && !isTest && NODE_MODULE.test(spec)) {
      problems.push(`${rel}:${i + 1}: ${top}/ must run in a browser worker: no Node module (${spec})`);
    }
  });
}
for (const top of Object.keys(ALLOWED)) {
  try {
    walk(join(root, top));
  } catch (e) {
    if (e.code !== 'ENOENT') throw e;
  }
}
if (problems.length) {
  console.error(problems.join('\n'));
  console.error(`check-imports: ${problems.length} import(s) against the direction files → parsers → model → views`);
  process.exit(1);
}
console.log('check-imports: ok');
