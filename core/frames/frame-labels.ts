// Frame labels before (or without) symbolization: "module+0xoffset" from the maps, else the raw address.

import { findMapping, moduleName } from '../formats/proc-maps.js';
import type { ProcessSeries } from '../model/model.js';

export interface FrameLocation {
  address: string;
  /** basename of the mapped file, null when the address is in no file mapping (or there are no maps) */
  module: string | null;
  modulePath: string | null;
  /** file offset within the module, hex */
  moduleOffset: string | null;
}

export function locateAddress(proc: ProcessSeries, addressId: number): FrameLocation {
  const address = proc.addresses.hex[addressId];
  if (!proc.maps) return { address, module: null, modulePath: null, moduleOffset: null };
  const a = BigInt(address);
  const m = findMapping(proc.maps, a);
  if (!m || m.path === '') return { address, module: null, modulePath: null, moduleOffset: null };
  const off = a - m.start + m.offset;
  return { address, module: moduleName(m), modulePath: m.path, moduleOffset: '0x' + off.toString(16) };
}

export function frameLabel(loc: FrameLocation): string {
  return loc.module !== null && loc.moduleOffset !== null ? `${loc.module}+${loc.moduleOffset}` : loc.address;
}
