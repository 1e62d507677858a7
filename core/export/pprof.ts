// pprof protobuf (profile.proto) through the `pprof-format` package: sample types inuse_objects/count and
// inuse_space/bytes, preceded by alloc_objects/count and alloc_space/bytes when every snapshot has accumulated counts
// (prof_accum:true), as Go's heap profiles have them; the default is `defaultSample` (inuse_space), one location per distinct frame with its function/file/line lines (inlined frames
// innermost first, as profile.proto wants), mappings from the maps. Values are the unbiased estimates rounded to
// integers so that each process's sum equals its rounded total. Several processes go into one profile, each
// sample labelled process=<key> and pid=<pid>; `go tool pprof -tagfocus` selects one. Python frames are functions
// with their file and line (a location per line); the interpreter's marker at a stack's leaf gives way to the Python
// frame above it (pythonLeaf).

import {
  Function as PFunction,
  Line,
  Location,
  Mapping,
  Profile,
  Sample,
  StringTable,
  ValueType,
  Label,
} from 'pprof-format';
import { findMapping, isFileMapping, type MapsEntry } from '../formats/proc-maps.js';
import { frameLines, type Frame } from '../frames/describe.js';
import { snapshotSamples, type ExportInput, type SampleOptions } from './samples.js';
import { isBuiltinSample, type SampleType } from '../model/sample-type.js';
import { revealControlsInLine } from '../model/display-text.js';

export interface PprofOptions extends SampleOptions {
  /** free-text comments stored in the profile */
  comments?: string[];
  /** the sample type pprof shows first (`-sample_index` picks another); alloc_* only when written */
  defaultSample?: SampleType;
}

/**
 * A stack's frames with the interpreter's marker at the leaf dropped when a Python frame follows it: the bytes
 * belong to the Python line that made the interpreter allocate, so `go tool pprof -top` (which counts the leaf as
 * flat) names that line, as Python memory profilers' pprof outputs do, not "[interpreter frames]" for nearly all
 * of a Python job. Native frames of extensions at the leaf (numpy's allocator calls) stay: they name the allocation.
 */
export function pythonLeaf(frames: readonly Frame[]): readonly Frame[] {
  let k = 0;
  while (k < frames.length && frames[k].kind === 'folded') k++;
  return k > 0 && frames[k]?.kind === 'python' ? frames.slice(k) : frames;
}

export function toPprof(inputs: readonly ExportInput[], options: PprofOptions = {}): Uint8Array {
  const strings = new StringTable();
  // every string through the display rule (core/model/display-text.ts): pprof prints them as they are
  const str = (s: string): number => strings.dedup(revealControlsInLine(s));
  const mappings: Mapping[] = [];
  const locations: Location[] = [];
  const functions: PFunction[] = [];
  const samples: Sample[] = [];
  const functionIds = new Map<string, number>();
  const locationIds = new Map<string, number>();
  const multi = inputs.length > 1;
  let earliest: number | null = null;
  let period = 0;
  const withAlloc =
    inputs.length > 0 &&
    inputs.every((x) => {
      const s = x.proc.snapshots[x.snapshotIndex];
      return s.hasAccumulated && s.accumBytes !== null;
    });

  inputs.forEach((input, pi) => {
    const { proc } = input;
    const snap = proc.snapshots[input.snapshotIndex];
    if (snap.mtimeMs !== null && (earliest === null || snap.mtimeMs < earliest)) earliest = snap.mtimeMs;
    period = Math.max(period, snap.samplePeriod);
    // mappings of this process (file-backed only), to give addresses their module
    const fileMaps: MapsEntry[] = [];
    const idOf = new Map<MapsEntry, number>();
    for (const m of proc.maps ?? []) {
      if (!isFileMapping(m)) continue;
      const id = mappings.length + 1;
      mappings.push(
        new Mapping({
          id,
          memoryStart: m.start,
          memoryLimit: m.end,
          fileOffset: m.offset,
          filename: str(m.path),
          hasFunctions: true,
        }),
      );
      fileMaps.push(m);
      idOf.set(m, id);
    }
    // the one mapping lookup (core/formats/proc-maps.ts), over the file mappings
    fileMaps.sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0));
    const mappingOf = (addr: bigint): number => {
      const m = findMapping(fileMaps, addr);
      return m ? (idOf.get(m) ?? 0) : 0;
    };

    const labels = multi || proc.pid !== null ? [new Label({ key: str('process'), str: str(proc.key) })] : [];
    if (proc.pid !== null) labels.push(new Label({ key: str('pid'), num: proc.pid }));
    for (const s of snapshotSamples(input, options)) {
      if (s.intBytes === 0 && s.intObjects === 0 && !(withAlloc && (s.intAccumBytes || s.intAccumObjects))) continue;
      const locs: number[] = [];
      for (const f of pythonLeaf(s.frames)) {
        const lines = frameLines(f);
        const key = `${pi}|${f.address}|${f.kind}|${JSON.stringify(lines)}`;
        let lid = locationIds.get(key);
        if (lid === undefined) {
          lid = locations.length + 1;
          locationIds.set(key, lid);
          const addr = BigInt(f.address);
          locations.push(
            new Location({
              id: lid,
              mappingId: f.kind === 'python' || f.kind === 'folded' ? 0 : mappingOf(addr),
              address: addr,
              line: lines.map(
                (l) => new Line({ functionId: functionId(l.function ?? '?', l.file), line: l.line ?? 0 }),
              ),
            }),
          );
        }
        locs.push(lid);
      }
      const value = withAlloc
        ? [s.intAccumObjects ?? 0, s.intAccumBytes ?? 0, s.intObjects, s.intBytes]
        : [s.intObjects, s.intBytes];
      samples.push(new Sample({ locationId: locs, value, label: labels }));
    }
  });

  function functionId(name: string, file: string | null): number {
    const key = `${name}\u0000${file ?? ''}`;
    let id = functionIds.get(key);
    if (id === undefined) {
      id = functions.length + 1;
      functionIds.set(key, id);
      functions.push(new PFunction({ id, name: str(name), systemName: str(name), filename: str(file ?? '') }));
    }
    return id;
  }

  const profile = new Profile({
    sampleType: [
      ...(withAlloc
        ? [
            new ValueType({ type: str('alloc_objects'), unit: str('count') }),
            new ValueType({ type: str('alloc_space'), unit: str('bytes') }),
          ]
        : []),
      new ValueType({ type: str('inuse_objects'), unit: str('count') }),
      new ValueType({ type: str('inuse_space'), unit: str('bytes') }),
    ],
    sample: samples,
    mapping: mappings,
    location: locations,
    function: functions,
    stringTable: strings,
    periodType: new ValueType({ type: str('space'), unit: str('bytes') }),
    period,
    timeNanos: earliest !== null ? BigInt(Math.round(earliest)) * 1_000_000n : 0,
    comment: (options.comments ?? []).map(str),
    defaultSampleType: 0,
  });
  // the export writes the four built-in types only: another default (a declared type) falls back to inuse_space
  const asked = options.defaultSample ?? 'inuse_space';
  const wanted = isBuiltinSample(asked) ? asked : 'inuse_space';
  profile.defaultSampleType = str(withAlloc || !wanted.startsWith('alloc_') ? wanted : 'inuse_space');
  return profile.encode();
}
