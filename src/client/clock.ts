// Time as the client's loops see it: a monotonic clock and timers behind one interface, so the work
// queue, informers and the leader elector can be driven by a ManualClock in tests and never by sleeps.

export interface Timer {
  cancel(): void;
}

export interface Clock {
  /** Monotonic milliseconds (never goes back; unrelated to the wall clock). */
  now(): number;
  /** Wall-clock time, for the timestamps written into objects (renewTime, lastTimestamp). */
  wallNow(): Date;
  setTimer(fn: () => void, ms: number): Timer;
}

export const realClock: Clock = {
  now: () => performance.now(),
  wallNow: () => new Date(),
  setTimer(fn, ms) {
    const t = setTimeout(fn, Math.max(0, ms));
    return { cancel: () => clearTimeout(t) };
  },
};

/** Sleeps on a clock; resolves early (false) when the signal aborts. */
export function sleepOn(clock: Clock, ms: number, signal?: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal?.aborted) {
      resolve(false);
      return;
    }
    const onAbort = (): void => {
      timer.cancel();
      resolve(false);
    };
    const timer = clock.setTimer(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
