// Messages handed on in order, some in a task of their own: a large engine answer is decoded in the task that
// received it and drawn in the next, so the page's longest task is one of the two, not both (the final summary of a
// 1,000-process job: ~55 ms of decoding, then ~110 ms of drawing and layout in one 164 ms task).

/** Runs `fn` in a later task (a MessagePort message: no timer clamp when tasks follow each other). */
export function nextTask(fn: () => void): void {
  const ch = new MessageChannel();
  ch.port1.onmessage = () => {
    ch.port1.close();
    fn();
  };
  ch.port2.postMessage(null);
}

/**
 * `deliver` in arrival order: at once while nothing waits, else after what waits, one a task; `later` items (and any
 * after them) start a task of their own.
 */
export function taskQueue<T>(
  deliver: (item: T) => void,
  schedule: (fn: () => void) => void = nextTask,
): (item: T, later: boolean) => void {
  const waiting: T[] = [];
  const drain = (): void => {
    const item = waiting.shift() as T;
    if (waiting.length > 0) schedule(drain);
    deliver(item);
  };
  return (item, later) => {
    if (waiting.length === 0 && !later) {
      deliver(item);
      return;
    }
    waiting.push(item);
    if (waiting.length === 1) schedule(drain);
  };
}
