// A report file that is not one, is damaged, or comes from a newer heaplens.
export class ReportError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ReportError';
  }
}
