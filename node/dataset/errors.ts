// A dataset that cannot be read: the error names the file (the CLI prints it as one line, exit 1).

export class DatasetError extends Error {
  constructor(
    readonly file: string,
    message: string,
  ) {
    super(`${file}: ${message}`);
    this.name = 'DatasetError';
  }
}
