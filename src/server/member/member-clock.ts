// The member's time: the clock its deadlines read and the timers its retries and batching use. A process
// member runs on Node's own; the simulation (src/sim/member-loop/) gives each member a virtual one, so the
// same proposal, batching and ReadIndex code runs with time that a seed decides.

/** An opaque timer handle: whatever the clock's setTimeout returned, for its clearTimeout. */
export type TimerHandle = unknown;

export interface MemberClock {
  /** Milliseconds on a monotonic clock (only differences mean anything). */
  now(): number;
  /** Wall-clock milliseconds since the Unix epoch: what tells one start of a member from the next. */
  epochMs(): number;
  setTimeout(fn: () => void, ms: number): TimerHandle;
  clearTimeout(h: TimerHandle): void;
  /** Runs fn after the current turn of the event loop (Node's setImmediate). */
  setImmediate(fn: () => void): void;
}

export const realClock: MemberClock = {
  now: () => performance.now(),
  epochMs: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout | undefined),
  setImmediate: (fn) => void setImmediate(fn),
};
