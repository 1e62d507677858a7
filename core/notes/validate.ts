// Reading a session from untrusted text: every field checked for type, shape and size; problems name the
// field ("notes[3].color: …"). A newer schema is refused with a message saying so; unknown fields are dropped.

import {
  NOTE_KINDS,
  SESSION_FORMAT,
  SESSION_SCHEMA,
  defaultView,
  type Note,
  type NoteTarget,
  type Session,
  type SnapshotRef,
  type StackTarget,
  type ViewState,
} from './schema.js';

export class SessionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SessionError';
  }
}

/** The file was written by a newer heaplens: reading it could lose what this one does not know. */
export class SessionVersionError extends SessionError {
  constructor(
    readonly found: number,
    readonly supported: number,
  ) {
    super(
      `this session was written by a newer heaplens (schema ${found}); this one reads up to ${supported}. Update heaplens to open it.`,
    );
    this.name = 'SessionVersionError';
  }
}

export const LIMITS = {
  /** whole file, characters */
  fileChars: 64 * 1024 * 1024,
  notes: 100_000,
  noteChars: 100_000,
  pathChars: 4096,
  files: 100_000,
  stackFrames: 4096,
  shortChars: 1024,
  extraKeys: 256,
};

type Obj = Record<string, unknown>;

function fail(path: string, what: string): never {
  throw new SessionError(`${path}: ${what}`);
}

function obj(v: unknown, path: string): Obj {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) fail(path, 'expected an object');
  return v as Obj;
}

function arr(v: unknown, path: string, max: number): unknown[] {
  if (!Array.isArray(v)) fail(path, 'expected a list');
  if (v.length > max) fail(path, `more than ${max} entries`);
  return v;
}

function str(v: unknown, path: string, max: number): string {
  if (typeof v !== 'string') fail(path, 'expected a string');
  if (v.length > max) fail(path, `longer than ${max} characters`);
  return v;
}

function optStr(v: unknown, path: string, max: number): string | null {
  return v === null || v === undefined ? null : str(v, path, max);
}

function bool(v: unknown, path: string): boolean {
  if (typeof v !== 'boolean') fail(path, 'expected true or false');
  return v;
}

function int(v: unknown, path: string): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v)) fail(path, 'expected a whole number');
  return v;
}

function isoDate(v: unknown, path: string): string {
  const s = str(v, path, 64);
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/.test(s) || Number.isNaN(Date.parse(s)))
    fail(path, 'expected an ISO 8601 date-time');
  return s;
}

function oneOf<T extends string>(v: unknown, path: string, allowed: readonly T[]): T {
  if (typeof v !== 'string' || !(allowed as readonly string[]).includes(v))
    fail(path, `expected one of ${allowed.join(', ')}`);
  return v as T;
}

const HEX_ADDR = /^0x[0-9a-f]{1,16}$/;
const COLOR = /^#[0-9a-fA-F]{6}$/;

function snapshotRef(v: unknown, path: string): SnapshotRef {
  const o = obj(v, path);
  const seq = o.seq === null || o.seq === undefined ? null : int(o.seq, `${path}.seq`);
  return { file: str(o.file, `${path}.file`, LIMITS.pathChars), seq };
}

function stackTarget(o: Obj, path: string): StackTarget {
  const frames = arr(o.frames, `${path}.frames`, LIMITS.stackFrames).map((f, i) => {
    const s = str(f, `${path}.frames[${i}]`, 18);
    if (!HEX_ADDR.test(s)) fail(`${path}.frames[${i}]`, 'expected a hex address (0x…, lowercase)');
    return s;
  });
  const t: StackTarget = { kind: 'stack', process: str(o.process, `${path}.process`, LIMITS.pathChars), frames };
  if (o.label !== undefined && o.label !== null) t.label = str(o.label, `${path}.label`, LIMITS.shortChars * 4);
  return t;
}

export function parseNoteTarget(v: unknown, path: string): NoteTarget {
  const o = obj(v, path);
  const kind = oneOf(o.kind, `${path}.kind`, NOTE_KINDS);
  switch (kind) {
    case 'stack':
      return stackTarget(o, path);
    case 'frame': {
      const t: NoteTarget = {
        kind,
        process: optStr(o.process, `${path}.process`, LIMITS.pathChars),
        function: str(o.function, `${path}.function`, LIMITS.pathChars),
      };
      if (o.module !== undefined) t.module = optStr(o.module, `${path}.module`, LIMITS.pathChars);
      return t;
    }
    case 'snapshot':
      return {
        kind,
        process: str(o.process, `${path}.process`, LIMITS.pathChars),
        snapshot: snapshotRef(o.snapshot, `${path}.snapshot`),
      };
    case 'span':
      return {
        kind,
        process: str(o.process, `${path}.process`, LIMITS.pathChars),
        from: snapshotRef(o.from, `${path}.from`),
        to: snapshotRef(o.to, `${path}.to`),
      };
    case 'diff':
      return {
        kind,
        process: str(o.process, `${path}.process`, LIMITS.pathChars),
        base: snapshotRef(o.base, `${path}.base`),
        target: snapshotRef(o.target, `${path}.target`),
      };
  }
}

export function parseNote(v: unknown, path: string): Note {
  const o = obj(v, path);
  const color = str(o.color, `${path}.color`, 7);
  if (!COLOR.test(color)) fail(`${path}.color`, 'expected a colour like #e4572e');
  const n: Note = {
    id: str(o.id, `${path}.id`, 128),
    target: parseNoteTarget(o.target, `${path}.target`),
    text: str(o.text, `${path}.text`, LIMITS.noteChars),
    color: color.toLowerCase(),
    createdAt: isoDate(o.createdAt, `${path}.createdAt`),
  };
  if (o.updatedAt !== undefined && o.updatedAt !== null) n.updatedAt = isoDate(o.updatedAt, `${path}.updatedAt`);
  return n;
}

function viewState(v: unknown, path: string): ViewState {
  const d = defaultView();
  if (v === undefined || v === null) return d;
  const o = obj(v, path);
  const extra: ViewState['extra'] = {};
  if (o.extra !== undefined) {
    const e = obj(o.extra, `${path}.extra`);
    const keys = Object.keys(e);
    if (keys.length > LIMITS.extraKeys) fail(`${path}.extra`, `more than ${LIMITS.extraKeys} keys`);
    for (const k of keys) {
      if (k.length > 128) fail(`${path}.extra`, 'key longer than 128 characters');
      const x = e[k];
      if (x === null || typeof x === 'boolean' || (typeof x === 'number' && Number.isFinite(x))) extra[k] = x;
      else if (typeof x === 'string') extra[k] = str(x, `${path}.extra.${k}`, LIMITS.shortChars * 4);
      else fail(`${path}.extra.${k}`, 'expected a string, number, boolean or null');
    }
  }
  return {
    tab: o.tab === undefined ? d.tab : optStr(o.tab, `${path}.tab`, 64),
    stackMode:
      o.stackMode === undefined
        ? d.stackMode
        : oneOf(o.stackMode, `${path}.stackMode`, ['python-first', 'merged', 'python', 'native'] as const),
    showAllocator: o.showAllocator === undefined ? d.showAllocator : bool(o.showAllocator, `${path}.showAllocator`),
    measure: o.measure === undefined ? d.measure : oneOf(o.measure, `${path}.measure`, ['bytes', 'objects'] as const),
    search: o.search === undefined ? d.search : str(o.search, `${path}.search`, LIMITS.shortChars),
    flameZoom:
      o.flameZoom === undefined || o.flameZoom === null
        ? null
        : arr(o.flameZoom, `${path}.flameZoom`, LIMITS.stackFrames).map((x, i) =>
            str(x, `${path}.flameZoom[${i}]`, LIMITS.pathChars),
          ),
    selectedStack:
      o.selectedStack === undefined || o.selectedStack === null
        ? null
        : stackTarget(obj(o.selectedStack, `${path}.selectedStack`), `${path}.selectedStack`),
    extra,
  };
}

/** Checks an already-parsed JSON value; returns a Session or throws SessionError / SessionVersionError. */
export function validateSession(v: unknown): Session {
  const o = obj(v, 'session');
  if (o.format !== SESSION_FORMAT) fail('format', `not a heaplens session (expected "${SESSION_FORMAT}")`);
  const schema = int(o.schema, 'schema');
  if (schema > SESSION_SCHEMA) throw new SessionVersionError(schema, SESSION_SCHEMA);
  if (schema < 1) fail('schema', 'expected 1 or more');
  const sym = obj(o.symbols ?? { dirs: [], sysroot: null, enabled: true }, 'symbols');
  const sel = obj(o.selection ?? {}, 'selection');
  const notes = arr(o.notes ?? [], 'notes', LIMITS.notes).map((n, i) => parseNote(n, `notes[${i}]`));
  const ids = new Set<string>();
  notes.forEach((n, i) => {
    if (ids.has(n.id)) fail(`notes[${i}].id`, `duplicate id ${JSON.stringify(n.id)}`);
    ids.add(n.id);
  });
  let source: Session['source'] = null;
  if (o.source !== undefined && o.source !== null) {
    const s = obj(o.source, 'source');
    oneOf(s.kind, 'source.kind', ['report'] as const);
    source = {
      kind: 'report',
      title: str(s.title, 'source.title', LIMITS.shortChars),
      createdAt: isoDate(s.createdAt, 'source.createdAt'),
      ...(s.leftOut === undefined ? {} : { leftOut: str(s.leftOut, 'source.leftOut', LIMITS.shortChars * 4) }),
    };
  }
  return {
    format: SESSION_FORMAT,
    schema: SESSION_SCHEMA,
    savedAt: isoDate(o.savedAt, 'savedAt'),
    writer: o.writer === undefined ? 'unknown' : str(o.writer, 'writer', 256),
    files: arr(o.files ?? [], 'files', LIMITS.files).map((f, i) => str(f, `files[${i}]`, LIMITS.pathChars)),
    symbols: {
      dirs: arr(sym.dirs ?? [], 'symbols.dirs', 1024).map((f, i) => str(f, `symbols.dirs[${i}]`, LIMITS.pathChars)),
      sysroot: optStr(sym.sysroot, 'symbols.sysroot', LIMITS.pathChars),
      enabled: sym.enabled === undefined ? true : bool(sym.enabled, 'symbols.enabled'),
    },
    selection: {
      process: optStr(sel.process, 'selection.process', LIMITS.pathChars),
      base: sel.base === undefined || sel.base === null ? null : snapshotRef(sel.base, 'selection.base'),
      target: sel.target === undefined || sel.target === null ? null : snapshotRef(sel.target, 'selection.target'),
    },
    view: viewState(o.view, 'view'),
    notes,
    readOnly: o.readOnly === undefined ? false : bool(o.readOnly, 'readOnly'),
    source,
  };
}

/**
 * Largest session file read, in bytes, checked against the file's size before reading (a 600 MB file
 * read first cost 586 MB): the character limit, at one byte a character, as sessions are written.
 */
export const MAX_SESSION_BYTES = LIMITS.fileChars;

/** Throws when a session file of this many bytes is too large to be read. */
export function checkSessionFileSize(bytes: number): void {
  if (bytes > MAX_SESSION_BYTES)
    throw new SessionError(
      `session file of ${bytes} bytes is larger than the ${MAX_SESSION_BYTES} bytes a session may have; not read`,
    );
}

/** Parses the text of a session file (untrusted). */
export function parseSession(text: string): Session {
  if (text.length > LIMITS.fileChars) throw new SessionError(`session file larger than ${LIMITS.fileChars} characters`);
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    throw new SessionError(`not a session file (not JSON: ${e instanceof Error ? e.message : String(e)})`);
  }
  return validateSession(v);
}

/** The text written to disk: stable key order, 2-space indent, final newline. */
export function serializeSession(s: Session, savedAt: Date = new Date()): string {
  const out: Session = { ...s, format: SESSION_FORMAT, schema: SESSION_SCHEMA, savedAt: savedAt.toISOString() };
  validateSession(JSON.parse(JSON.stringify(out)));
  return JSON.stringify(out, null, 2) + '\n';
}
