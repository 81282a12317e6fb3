// Waiting on conditions instead of sleeping, for everything that starts processes and for the tests that
// use them: a probe is asked again and again until it yields a value, and a timeout names what was awaited
// (and, if the caller says how, the state it was in), so a slow machine fails with a reason.

/** Not there yet: undefined or false. Anything else is the awaited value (true for a plain condition). */
export type Probe<T> = () => Promise<T | undefined | false> | T | undefined | false;

export interface WaitOptions {
  /** How long before giving up (default 30 s: generous, the machine may be shared and slow). */
  readonly timeoutMs?: number;
  /** The pause between two asks (default 50 ms). */
  readonly intervalMs?: number;
  /** Appended to the timeout's message: what the state was when it gave up. */
  readonly detail?: () => string;
}

/**
 * Resolves with the first value the probe returns that is neither undefined nor false. A probe that
 * throws ends the wait with its error: that is how a probe says "this will never happen" (a process died).
 */
export async function waitFor<T>(what: string, probe: Probe<T>, opts: WaitOptions = {}): Promise<T> {
  const timeoutMs = opts.timeoutMs ?? 30_000;
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined && v !== false) return v;
    if (performance.now() > deadline) {
      const detail = opts.detail?.();
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${detail ? `: ${detail}` : ''}`);
    }
    await pause(opts.intervalMs ?? 50);
  }
}

/** For a probe: the call's result, or undefined when it fails (a member down, a deadline, no leader yet). */
export async function orUndefined<T>(p: Promise<T>): Promise<T | undefined> {
  try {
    return await p;
  } catch {
    return undefined;
  }
}

/** A client's pause between retries or polls, never a test's wait for something to happen. */
export function pause(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
