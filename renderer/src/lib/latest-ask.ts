// One request of a kind at a time, the latest wish served next: while a job loads each update asks again, and
// answers the window no longer wants would still cost the page their decoding. An ask of the same key as the
// last request sent (an update of the loading job's ranking) also waits until `share` × that request's time has
// passed since it ended — the worker that answers also merges the dumps, so asking as often as the job grows held
// the load back; a new key (another job, view or limit) is asked at once, and an update queued before it is
// dropped. The answer of an ask whose key is no longer the latest is dropped too. Pure scheduling (timers and a
// clock injected), so it is tested without a page.

export interface LatestAskOptions<A, R> {
  send: (ask: A) => Promise<R>;
  /** an answer to an ask whose key is still the latest */
  apply: (answer: R, ask: A) => void;
  fail: (e: unknown) => void;
  /** whether an update of the same key should wait (while the job loads) */
  throttled: () => boolean;
  share: number;
  /**
   * whether the job being updated will be whole within `ms` (share × the last answer's time): then an update is
   * dropped, not sent — the full job's own ask (a new key) comes before such an update would pay for itself, and the
   * worker answering it would hold back the end of the load
   */
  soonWhole?: (ms: number) => boolean;
  now?: () => number;
  setTimer?: (f: () => void, ms: number) => unknown;
  clearTimer?: (t: unknown) => void;
}

export class LatestAsk<A extends { key: string }, R> {
  private busy = false;
  private next: A | null = null;
  /** the latest wish's key: an answer of another is dropped */
  private key = '';
  /** the key of the last request sent: an ask of the same key is an update of it */
  private sentKey: string | null = null;
  private lastMs = 0;
  private lastEnd = 0;
  private timer: unknown = null;
  private readonly now: () => number;
  private readonly setTimer: (f: () => void, ms: number) => unknown;
  private readonly clearTimer: (t: unknown) => void;

  constructor(private readonly o: LatestAskOptions<A, R>) {
    this.now = o.now ?? (() => performance.now());
    this.setTimer = o.setTimer ?? ((f, ms) => setTimeout(f, ms));
    this.clearTimer = o.clearTimer ?? ((t) => clearTimeout(t as ReturnType<typeof setTimeout>));
  }

  ask(ask: A): void {
    const update = ask.key === this.sentKey;
    this.key = ask.key;
    if (this.timer !== null && !update) {
      this.clearTimer(this.timer);
      this.timer = null;
    }
    if (this.busy || this.timer !== null) {
      this.next = ask;
      return;
    }
    const wait = update && this.o.throttled() ? this.lastEnd + this.o.share * this.lastMs - this.now() : 0;
    if (wait > 0) {
      this.next = ask;
      this.timer = this.setTimer(() => {
        this.timer = null;
        this.serveNext();
      }, wait);
      return;
    }
    if (update && this.o.throttled() && this.o.soonWhole?.(this.o.share * this.lastMs)) {
      this.next = null;
      return;
    }
    // this ask is the latest wish: one queued before it is superseded (served after it, it would put an older
    // key back as the latest and its answer on screen)
    this.next = null;
    this.busy = true;
    this.sentKey = ask.key;
    const t0 = this.now();
    this.o
      .send(ask)
      .then((r) => {
        if (ask.key === this.key) this.o.apply(r, ask);
      })
      .catch((e: unknown) => this.o.fail(e))
      .finally(() => {
        this.busy = false;
        this.lastEnd = this.now();
        this.lastMs = this.lastEnd - t0;
        this.serveNext();
      });
  }

  private serveNext(): void {
    const next = this.next;
    this.next = null;
    if (next) this.ask(next);
  }
}
