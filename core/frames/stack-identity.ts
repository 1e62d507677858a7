// Job-wide identity of frames and stacks: the same code in different processes gets the same key,
// so one stack can be followed across the ranks of a job (and a forked child's inherited stacks
// match its parent's).
//
// Raw return addresses differ per process under ASLR, and Python frame ids (pseudo-addresses) are
// handed out per process, so neither can be a key. Instead:
//   native frame   "n:<module>+0x<file offset>"   module = "b:<build-id>" when known, else "p:<mapped path>"
//   Python frame   "y:" + JSON [qualname, file, line]
//   Python marker  "ym:<entry|unmerged|truncated>"  (structure the producer wrote; the same code path writes the same)
//   unresolved     "u:0x<raw address>"    an address in no file mapping, a process without maps, or a
//                  Python frame the table does not name: per process, so it only matches by chance of equal addresses
// A stack's key is a 96-bit hash of its frames' identities (three 32-bit lanes) plus its depth:
// "k<depth>-<24 hex>". Birthday bound: 10^6 distinct stacks collide with probability ~10^−17.

import {
  decodePseudoAddress,
  PY_KIND_ENTRY,
  PY_KIND_FRAME,
  PY_KIND_TRUNCATED,
  PY_KIND_UNMERGED,
} from '../formats/pyframes.js';
import { locateHex } from '../formats/proc-maps.js';
import type { ProcessSeries } from '../model/model.js';
import { layoutOf } from './python-stacks.js';

export interface IdentityOptions {
  /** build-id of a mapped file, by its path as in the maps (from the symbolizer, when it read the binary) */
  buildIds?: ReadonlyMap<string, string>;
}

const MARKER_NAME: Record<number, string> = {
  [PY_KIND_ENTRY]: 'entry',
  [PY_KIND_UNMERGED]: 'unmerged',
  [PY_KIND_TRUNCATED]: 'truncated',
};

// Default-option stack keys per process (maps, frame tables and addresses do not change after loading). The
// frame identities are not kept: a string per address (over a million in a 16 × 5,000-stack job, ~70 MB) for
// keys that are only hashed.
const stackCache = new WeakMap<ProcessSeries, string[]>();

/** The job-wide identity of every address of `proc` (index = address id). */
export function frameIdentities(proc: ProcessSeries, options: IdentityOptions = {}): string[] {
  const of = identityOf(proc, options);
  return proc.addresses.hex.map((_, a) => of(a));
}

/** The identity of an address id of `proc`, one at a time. */
function identityOf(proc: ProcessSeries, options: IdentityOptions): (addressId: number) => string {
  const table = proc.pythonFrames ?? null;
  const layout = layoutOf(table);
  const maps = proc.maps;
  return (a) => {
    const hex = proc.addresses.hex[a];
    const pa = decodePseudoAddress(hex, layout);
    if (pa) {
      if (pa.kind === PY_KIND_FRAME) {
        const e = table?.frames.get(pa.addr);
        if (e) return 'y:' + JSON.stringify([e.function, e.file, e.line]);
        return 'u:' + pa.addr;
      }
      const marker = MARKER_NAME[pa.kind];
      return marker ? 'ym:' + marker : 'u:' + pa.addr;
    }
    const at = maps ? locateHex(maps, hex) : null;
    if (!at || !at.entry.path.startsWith('/')) return 'u:' + hex;
    const id = options.buildIds?.get(at.entry.path);
    return `n:${id ? 'b:' + id : 'p:' + at.entry.path}+${at.offset}`;
  };
}

/** The job-wide identity of one frame of `proc`. */
export function frameIdentity(proc: ProcessSeries, addressId: number, options: IdentityOptions = {}): string {
  return identityOf(proc, options)(addressId);
}

/** True for an identity that is only the raw address (no mapping, or an unnamed Python frame). */
export function isUnresolvedIdentity(id: string): boolean {
  return id.startsWith('u:');
}

/** The frame identities of stack `stackId`, leaf first. */
export function stackFrameIdentities(proc: ProcessSeries, stackId: number, options: IdentityOptions = {}): string[] {
  const of = identityOf(proc, options);
  const { offsets, frames } = proc.stacks;
  const out: string[] = [];
  for (let k = offsets[stackId]; k < offsets[stackId + 1]; k++) out.push(of(frames[k]));
  return out;
}

/** One stable key per stack id of `proc` (index = stack id); equal keys mean the same code path. */
export function stackIdentityKeys(proc: ProcessSeries, options: IdentityOptions = {}): string[] {
  const cacheable = options.buildIds === undefined;
  const cached = cacheable ? stackCache.get(proc) : undefined;
  if (cached && cached.length === proc.stacks.count) return cached;
  const of = identityOf(proc, options);
  const n = proc.addresses.hex.length;
  // Hash each distinct frame identity once (made and dropped: not kept); a stack's key then mixes its frames'
  // hashes in order.
  const fh = new Uint32Array(n * 3);
  for (let a = 0; a < n; a++) {
    const s = of(a);
    let h1 = 0x811c9dc5;
    let h2 = 0x9e3779b9;
    let h3 = 0x85ebca6b;
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      h1 = Math.imul(h1 ^ c, 0x01000193);
      h2 = Math.imul(h2 ^ c, 0x5bd1e995);
      h2 ^= h2 >>> 15;
      h3 = Math.imul(h3 + c, 0xc2b2ae35);
      h3 ^= h3 >>> 13;
    }
    fh[3 * a] = h1 >>> 0;
    fh[3 * a + 1] = h2 >>> 0;
    fh[3 * a + 2] = h3 >>> 0;
  }
  const { offsets, frames, count } = proc.stacks;
  const out = new Array<string>(count);
  for (let s = 0; s < count; s++) {
    let h1 = 0x811c9dc5;
    let h2 = 0x27d4eb2f;
    let h3 = 0x165667b1;
    for (let k = offsets[s]; k < offsets[s + 1]; k++) {
      const a = frames[k];
      h1 = Math.imul(h1 ^ fh[3 * a], 0x01000193);
      h1 ^= h1 >>> 16;
      h2 = Math.imul(h2 ^ fh[3 * a + 1], 0x85ebca6b);
      h2 ^= h2 >>> 13;
      h3 = Math.imul(h3 ^ fh[3 * a + 2], 0xc2b2ae35);
      h3 ^= h3 >>> 16;
    }
    out[s] = `k${offsets[s + 1] - offsets[s]}-${hex8(h1)}${hex8(h2)}${hex8(h3)}`;
  }
  if (cacheable) stackCache.set(proc, out);
  return out;
}

function hex8(h: number): string {
  return (h >>> 0).toString(16).padStart(8, '0');
}
