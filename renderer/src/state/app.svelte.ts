// The window's state, put together: the shell (host, worker client, theme, error, status) and its four parts,
// each owning one concern — `job` (job.svelte.ts: load lifecycle), `selection` (selection.svelte.ts: what is
// selected and shown), `session` (session.svelte.ts: save/restore), `notes` (notes.svelte.ts). Large typed-array
// results are held with $state.raw (no proxies).

import type { Host } from '../lib/host.ts';
import { Shell } from './shell.svelte.ts';
import { Selection } from './selection.svelte.ts';
import { Notes } from './notes.svelte.ts';
import { Sessions } from './session.svelte.ts';
import { Job } from './job.svelte.ts';

export class AppState extends Shell {
  readonly selection: Selection;
  readonly notes: Notes;
  readonly session: Sessions;
  readonly job: Job;

  constructor(host: Host) {
    super(host);
    this.selection = new Selection(this);
    this.notes = new Notes(this, this.selection);
    this.session = new Sessions(this, this.selection, this.notes);
    this.job = new Job(this, this.selection, this.notes, this.session);
  }

  protected onEngineLost(): void {
    this.job.forget();
  }
}
