// The linearizable-read barrier on its own: rounds of ReadIndex requests, their contexts, retries and
// deadlines, driven by hand with fake timers (the member's real use is covered by the e2e and etcd suites).
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ReadBarrier } from '../../../src/server/member/read-barrier.js';

interface Harness {
  barrier: ReadBarrier;
  sent: string[];
  setApplied(n: number): void;
}

function harness(timeoutMs = 10_000): Harness {
  const sent: string[] = [];
  let applied = 0;
  const barrier = new ReadBarrier({
    readIndex: (ctx) => sent.push(Buffer.from(ctx).toString()),
    ctxPrefix: 'abc',
    applied: () => applied,
    retryMs: 500,
    timeoutMs,
  });
  return { barrier, sent, setApplied: (n) => (applied = n) };
}

const answer = (ctx: string, index: number) => ({ index, requestCtx: Buffer.from(ctx) });

/** Lets queued microtasks (a round starts in one) run. */
const settle = () => vi.advanceTimersByTimeAsync(0);

describe('ReadBarrier', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('serves the reads of a round once applied reaches the index the leader answered', async () => {
    const h = harness();
    let done = 0;
    void h.barrier.wait().then(() => done++);
    void h.barrier.wait().then(() => done++);
    await settle();
    expect(h.sent).toEqual(['abc:1']);
    h.barrier.onReadState(answer('abc:1', 7));
    await settle();
    expect(done).toBe(0);
    h.setApplied(7);
    h.barrier.onApplied();
    await settle();
    expect(done).toBe(2);
  });

  it('asks again with the same context when unanswered, so a late answer to the first request still serves', async () => {
    const h = harness();
    let done = false;
    void h.barrier.wait().then(() => (done = true));
    await settle();
    await vi.advanceTimersByTimeAsync(500);
    await vi.advanceTimersByTimeAsync(500);
    expect(h.sent).toEqual(['abc:1', 'abc:1', 'abc:1']);
    h.barrier.onReadState(answer('abc:1', 3));
    h.setApplied(3);
    h.barrier.onApplied();
    await settle();
    expect(done).toBe(true);
  });

  it('asks the new leader at once when the leader changes', async () => {
    const h = harness();
    void h.barrier.wait();
    await settle();
    h.barrier.onLeaderChange();
    expect(h.sent).toEqual(['abc:1', 'abc:1']);
  });

  it('reads arriving during a round wait for the next one, which has its own context', async () => {
    const h = harness();
    const order: string[] = [];
    void h.barrier.wait().then(() => order.push('first'));
    await settle();
    void h.barrier.wait().then(() => order.push('second'));
    await settle();
    expect(h.sent).toEqual(['abc:1']);
    h.barrier.onReadState(answer('abc:1', 1));
    h.setApplied(1);
    h.barrier.onApplied();
    await settle();
    expect(order).toEqual(['first']);
    expect(h.sent).toEqual(['abc:1', 'abc:2']);
    h.barrier.onReadState(answer('abc:1', 9)); // a stale answer does not serve the new round
    h.barrier.onReadState(answer('abc:2', 1));
    await settle();
    expect(order).toEqual(['first', 'second']);
  });

  it('fails a read still unanswered at its deadline with "request timed out"', async () => {
    const h = harness(1200);
    const got = h.barrier.wait().catch((e: Error) => e.message);
    await settle();
    await vi.advanceTimersByTimeAsync(1500);
    expect(await got).toBe('etcdserver: request timed out');
  });
});
