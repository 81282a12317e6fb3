// slowStartBatch: calls `fn` `count` times in batches of initial, 2×initial, 4×…, each batch in parallel,
// and stops after the first batch with a failure. A create that fails because of quota or a webhook's
// denial then costs one call, not `count`; the calls never made are the caller's to subtract.
export interface BatchResult {
  readonly successes: number;
  /** Calls made (successes and failures); count - attempted were never made. */
  readonly attempted: number;
  /** The first failure of the batch that stopped it. */
  readonly error?: unknown;
}

export async function slowStartBatch(count: number, initialBatchSize: number, fn: (i: number) => Promise<void>): Promise<BatchResult> {
  let remaining = count;
  let successes = 0;
  let started = 0;
  for (let batch = Math.min(remaining, initialBatchSize); batch > 0; batch = Math.min(2 * batch, remaining)) {
    const results = await Promise.allSettled(Array.from({ length: batch }, () => fn(started++)));
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    successes += results.filter((r) => r.status === 'fulfilled').length;
    if (failed !== undefined) return { successes, attempted: started, error: failed.reason };
    remaining -= batch;
  }
  return { successes, attempted: started };
}
