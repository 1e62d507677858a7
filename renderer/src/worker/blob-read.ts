// Bytes of a Blob (a dropped File) by range, for the analysis worker and the dump readers alike.

/** `length` bytes from `offset`; the whole Blob unsliced when asked for it (each slice is a new Blob that the
 *  browser process registers, one IPC round trip more a file). */
export async function readBlob(blob: Blob, offset: number, length: number): Promise<Uint8Array> {
  const whole = offset === 0 && length >= blob.size;
  return new Uint8Array(await (whole ? blob : blob.slice(offset, offset + length)).arrayBuffer());
}
