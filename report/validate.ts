// Structural check of a report's data read from a file (untrusted): types, shapes and indices in range, so that
// whoever shows it (the viewer, the app after reopening) can index without checks. Strings stay as they are:
// they are shown as text.

import type { ReportData } from './data.js';
import { ReportError } from './errors.js';

type Obj = Record<string, unknown>;

function fail(path: string, what: string): never {
  throw new ReportError(`the report's data is damaged: ${path}: ${what}`);
}
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
function obj(v: unknown, path: string): Obj {
  if (!isObj(v)) fail(path, 'expected an object');
  return v;
}
function list(v: unknown, path: string): unknown[] {
  if (!Array.isArray(v)) fail(path, 'expected a list');
  return v;
}
function str(v: unknown, path: string): string {
  if (typeof v !== 'string') fail(path, 'expected a string');
  return v;
}
function num(v: unknown, path: string): number {
  if (typeof v !== 'number' || !Number.isFinite(v)) fail(path, 'expected a number');
  return v;
}
function index(v: unknown, path: string, size: number, allowMinusOne = false): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v >= size || v < (allowMinusOne ? -1 : 0)) fail(path, `expected an index below ${size}`);
  return v;
}
function optNum(v: unknown, path: string): void {
  if (v !== null) num(v, path);
}

/** Throws ReportError naming the first bad field; returns the same object typed. */
export function validateReportData(v: unknown): ReportData {
  const d = obj(v, 'data');
  str(d.title, 'title');
  str(d.createdAt, 'createdAt');
  str(d.generator, 'generator');
  const strings = list(d.strings, 'strings');
  strings.forEach((s, i) => str(s, `strings[${i}]`));
  const nStr = strings.length;
  list(d.processes, 'processes').forEach((pv, pi) => {
    const P = `processes[${pi}]`;
    const p = obj(pv, P);
    str(p.key, `${P}.key`);
    optNum(p.pid, `${P}.pid`);
    str(p.prefix, `${P}.prefix`);
    const snaps = list(p.snapshots, `${P}.snapshots`);
    if (snaps.length === 0) fail(`${P}.snapshots`, 'empty');
    snaps.forEach((sv, si) => {
      const s = obj(sv, `${P}.snapshots[${si}]`);
      str(s.file, `${P}.snapshots[${si}].file`);
      optNum(s.seq, `${P}.snapshots[${si}].seq`);
      str(s.trigger, `${P}.snapshots[${si}].trigger`);
      num(s.liveBytes, `${P}.snapshots[${si}].liveBytes`);
      num(s.liveObjects, `${P}.snapshots[${si}].liveObjects`);
    });
    index(p.base, `${P}.base`, snaps.length);
    index(p.target, `${P}.target`, snaps.length);
    const frames = list(p.frames, `${P}.frames`);
    frames.forEach((fv, fi) => {
      const F = `${P}.frames[${fi}]`;
      const f = obj(fv, F);
      str(f.address, `${F}.address`);
      if (f.kind !== 'native' && f.kind !== 'allocator' && f.kind !== 'python' && f.kind !== 'folded') fail(`${F}.kind`, 'expected native, allocator, python or folded');
      index(f.module, `${F}.module`, nStr, true);
      if (f.moduleOffset !== null) str(f.moduleOffset, `${F}.moduleOffset`);
      const lines = list(f.lines, `${F}.lines`);
      if (lines.length === 0) fail(`${F}.lines`, 'empty');
      lines.forEach((lv, li) => {
        const l = list(lv, `${F}.lines[${li}]`);
        if (l.length !== 3) fail(`${F}.lines[${li}]`, 'expected [name, file, line]');
        index(l[0], `${F}.lines[${li}][0]`, nStr);
        index(l[1], `${F}.lines[${li}][1]`, nStr);
        num(l[2], `${F}.lines[${li}][2]`);
      });
    });
    list(p.stacks, `${P}.stacks`).forEach((sv, si) => {
      const S = `${P}.stacks[${si}]`;
      const s = obj(sv, S);
      list(s.frames, `${S}.frames`).forEach((x, k) => index(x, `${S}.frames[${k}]`, frames.length));
      list(s.addresses, `${S}.addresses`).forEach((x, k) => str(x, `${S}.addresses[${k}]`));
      for (const k of ['baseBytes', 'baseObjects', 'targetBytes', 'targetObjects']) num(s[k], `${S}.${k}`);
      if (s.growth !== null) {
        const g = obj(s.growth, `${S}.growth`);
        for (const k of ['slope', 'grew', 'r2', 'delta', 'score']) num(g[k], `${S}.growth.${k}`);
      }
      if (s.series !== null) {
        const ser = list(s.series, `${S}.series`);
        if (ser.length !== snaps.length) fail(`${S}.series`, 'not one value per snapshot');
        ser.forEach((x, k) => num(x, `${S}.series[${k}]`));
      }
    });
    const o = obj(p.other, `${P}.other`);
    for (const k of ['baseBytes', 'baseObjects', 'targetBytes', 'targetObjects', 'stacks']) num(o[k], `${P}.other.${k}`);
    num(p.stackCount, `${P}.stackCount`);
    if (p.maps !== null) list(p.maps, `${P}.maps`).forEach((m, mi) => str(obj(m, `${P}.maps[${mi}]`).path, `${P}.maps[${mi}].path`));
  });
  list(d.notes, 'notes');
  obj(d.session, 'session');
  list(d.warnings, 'warnings').forEach((w, i) => {
    const o = obj(w, `warnings[${i}]`);
    str(o.file, `warnings[${i}].file`);
    str(o.message, `warnings[${i}].message`);
  });
  const san = obj(d.sanitized, 'sanitized');
  if (typeof san.paths !== 'boolean' || typeof san.maps !== 'boolean') fail('sanitized', 'expected paths and maps flags');
  obj(d.options, 'options');
  return d as unknown as ReportData;
}
