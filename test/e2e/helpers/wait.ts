// Waiting on conditions instead of sleeping: a probe is asked again and again until it yields a value, and
// a timeout names what was awaited and the probe's last error, so a slow CI fails with a reason.

export type Probe<T> = () => Promise<T | undefined> | T | undefined;

/** Resolves with the first value the probe returns that is not undefined; a probe that throws aborts. */
export async function waitFor<T>(what: string, probe: Probe<T>, timeoutMs = 30_000, intervalMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await pause(intervalMs);
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
