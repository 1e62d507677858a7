// Saving in a browser (web page, report page): a download of a Blob.

export function browserSaveDownload(name: string, data: string | Uint8Array, mime: string): Promise<void> {
  const part: BlobPart = typeof data === 'string' ? data : new Uint8Array(data);
  const url = URL.createObjectURL(new Blob([part], { type: mime }));
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  a.click();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
  return Promise.resolve();
}
