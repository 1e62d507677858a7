// Which job a session is about, as a short stable key: autosaves are kept per job (one job's autosave never
// overwrites another's). The files a session names, order-free. Pure.

/** 16 hex digits (two FNV-1a 32-bit hashes) of the sorted file list; '' for a session without files. */
export function jobKey(files: readonly string[]): string {
  if (files.length === 0) return '';
  const text = [...files].sort().join('\n');
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ text.length;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    a = Math.imul(a ^ c, 16777619);
    b = Math.imul(b ^ c, 2246822519) ^ (b >>> 15);
  }
  return (a >>> 0).toString(16).padStart(8, '0') + (b >>> 0).toString(16).padStart(8, '0');
}

/** The files of a session's text, or [] (the text is checked elsewhere; this only picks the list). */
export function sessionFiles(text: string): string[] {
  try {
    const v = JSON.parse(text) as { files?: unknown };
    return Array.isArray(v.files) ? v.files.filter((f): f is string => typeof f === 'string') : [];
  } catch {
    return [];
  }
}
