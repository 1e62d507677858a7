// Frame labels before (or without) symbolization: "module+0xoffset" from the maps, else the raw address.

import { locateHex, moduleName } from '../formats/proc-maps.js';
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
  const at = proc.maps ? locateHex(proc.maps, address) : null;
  if (!at || at.entry.path === '') return { address, module: null, modulePath: null, moduleOffset: null };
  return { address, module: moduleName(at.entry), modulePath: at.entry.path, moduleOffset: at.offset };
}

export function frameLabel(loc: FrameLocation): string {
  return loc.module !== null && loc.moduleOffset !== null ? `${loc.module}+${loc.moduleOffset}` : loc.address;
}
