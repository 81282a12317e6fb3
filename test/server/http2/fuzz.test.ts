// Frame-level fuzzing of the client port's HTTP/2 server on a real member (`setpoint store`): random
// sequences of valid and invalid frames (requests, data, settings, windows, resets, pings, priorities,
// continuations, goaways, unknown types, wrong sizes, any flags, any stream), split at random across
// socket writes. Whatever comes, the member never fails, its loop is never held past attack-rig.ts's
// LOOP_BOUND_S (400 ms under `npm test`, the 50 ms target under `npm run bench:hostile`), and each
// connection is either still served (it answers a PING sent after the sequence) or was ended with a GOAWAY;
// once every connection is closed, the member's heap comes back to where it was. FUZZ_SEED repeats a run.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { startCluster } from '../../e2e/helpers/cluster.js';
import { LOOP_BOUND_S, keepReport } from './attack-rig.js';
import { scrapeLoop } from '../../../src/harness/loop-metrics.js';
import { waitFor } from '../../../src/harness/wait.js';
import {
  F,
  RANGE,
  RawH2,
  T,
  WATCH,
  frame,
  grpcMessage,
  rangeRequest,
  requestBlock,
  settings,
  u32,
  watchCreate,
} from './raw-h2.js';

const RUNS = Number(process.env.FUZZ_RUNS ?? 500);

const streamId = fc.oneof(fc.constantFrom(0, 1, 3, 5, 7, 9, 2, 4, 0x7fffffff), fc.integer({ min: 0, max: 0x7fffffff }));
const flags = fc.oneof(fc.constantFrom(0, F.END_STREAM, F.END_HEADERS, F.END_HEADERS | F.END_STREAM, F.PADDED, F.PRIORITY), fc.integer({ min: 0, max: 255 }));
const bytes = (max: number): fc.Arbitrary<Buffer> => fc.uint8Array({ maxLength: max }).map((a) => Buffer.from(a));
const u32s = fc.oneof(fc.constantFrom(0, 1, 65_535, 2 ** 31 - 1, 2 ** 31, 2 ** 32 - 1), fc.integer({ min: 0, max: 2 ** 32 - 1 }));

/** A header block: a real request, part of one, one with junk after it, or junk. */
const block = fc.oneof(
  fc.constantFrom(requestBlock(RANGE), requestBlock(WATCH), requestBlock('/etcdserverpb.Lease/LeaseGrant')),
  fc.tuple(fc.constantFrom(requestBlock(RANGE), requestBlock(WATCH)), fc.nat(200)).map(([b, n]) => b.subarray(0, n)),
  fc.tuple(fc.constantFrom(requestBlock(RANGE)), bytes(40)).map(([b, j]) => Buffer.concat([b, j])),
  bytes(64),
);

const payloads: Record<string, fc.Arbitrary<Buffer>> = {
  data: fc.oneof(
    fc.constantFrom(grpcMessage(rangeRequest('k')), grpcMessage(watchCreate('w')), Buffer.alloc(0)),
    bytes(300),
    fc.constantFrom(Buffer.alloc(16_384), Buffer.alloc(16_385)),
  ),
  settings: fc.array(fc.tuple(fc.integer({ min: 0, max: 8 }), u32s), { maxLength: 5 }).map((e) => settings(e).subarray(9)),
  u32: u32s.map(u32),
  ping: fc.oneof(bytes(8).map((b) => Buffer.concat([b, Buffer.alloc(8 - b.length)])), bytes(12)),
  priority: fc.oneof(fc.tuple(u32s, fc.nat(255)).map(([d, w]) => Buffer.concat([u32(d), Buffer.from([w])])), bytes(7)),
  goaway: fc.tuple(u32s, u32s, bytes(8)).map(([l, c, d]) => Buffer.concat([u32(l), u32(c), d])),
};

const oneFrame: fc.Arbitrary<Buffer> = fc.oneof(
  { weight: 4, arbitrary: fc.tuple(streamId, flags, block).map(([id, f, b]) => frame(T.HEADERS, f, id, b)) },
  { weight: 4, arbitrary: fc.tuple(streamId, flags, payloads.data as fc.Arbitrary<Buffer>).map(([id, f, p]) => frame(T.DATA, f, id, p)) },
  { weight: 2, arbitrary: fc.tuple(streamId, flags, block).map(([id, f, b]) => frame(T.CONTINUATION, f, id, b)) },
  { weight: 2, arbitrary: fc.tuple(fc.constantFrom(0, 0, 1), flags, payloads.settings as fc.Arbitrary<Buffer>).map(([id, f, p]) => frame(T.SETTINGS, f & F.ACK ? (p.length === 0 ? F.ACK : f) : 0, id, p)) },
  { weight: 2, arbitrary: fc.tuple(streamId, payloads.u32 as fc.Arbitrary<Buffer>).map(([id, p]) => frame(T.WINDOW_UPDATE, 0, id, p)) },
  { weight: 2, arbitrary: fc.tuple(streamId, payloads.u32 as fc.Arbitrary<Buffer>).map(([id, p]) => frame(T.RST_STREAM, 0, id, p)) },
  { weight: 2, arbitrary: fc.tuple(fc.constantFrom(0, 0, 1), flags, payloads.ping as fc.Arbitrary<Buffer>).map(([id, f, p]) => frame(T.PING, f, id, p)) },
  { weight: 1, arbitrary: fc.tuple(streamId, payloads.priority as fc.Arbitrary<Buffer>).map(([id, p]) => frame(T.PRIORITY, 0, id, p)) },
  { weight: 1, arbitrary: fc.tuple(fc.constantFrom(0, 1), payloads.goaway as fc.Arbitrary<Buffer>).map(([id, p]) => frame(T.GOAWAY, 0, id, p)) },
  { weight: 1, arbitrary: fc.tuple(fc.integer({ min: 10, max: 255 }), flags, streamId, bytes(20)).map(([t, f, id, p]) => frame(t, f, id, p)) },
  { weight: 1, arbitrary: fc.tuple(streamId, bytes(20)).map(([id, p]) => frame(T.PUSH_PROMISE, F.END_HEADERS, id, p)) },
);

/** Mostly well-formed openings (a request, then more), sometimes anything at all. */
const sequence = fc.oneof(
  fc.tuple(fc.constantFrom(1, 3), fc.array(oneFrame, { maxLength: 30 })).map(([id, rest]) => [frame(T.HEADERS, F.END_HEADERS, id, requestBlock(RANGE)), ...rest]),
  fc.array(oneFrame, { minLength: 1, maxLength: 30 }),
);

/** Where to cut the bytes into writes: fractions of the whole, sorted. */
const cuts = fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 8 });

function heapUsed(text: string): number {
  const m = /^nodejs_heap_size_used_bytes (\S+)$/m.exec(text);
  if (!m) throw new Error('nodejs_heap_size_used_bytes is not on /metrics');
  return Number(m[1]);
}

describe('the HTTP/2 server under frame-level fuzzing', () => {
  it(`stays up and responsive, serves or ends each connection with GOAWAY, and frees what connections held (${RUNS} runs)`, async () => {
    const seed = process.env.FUZZ_SEED !== undefined ? Number(process.env.FUZZ_SEED) : Math.floor(Math.random() * 2 ** 31);
    console.log(`HTTP/2 fuzz: seed=${seed} (FUZZ_SEED to repeat)`);
    const cluster = await startCluster({ size: 1, heartbeatMs: 100, electionMs: 1000 });
    const url = cluster.clientUrl('a');
    const metrics = async (): Promise<string> => (await fetch(`${url}/metrics`)).text();
    // Warm up (JIT, buffers) with the same kind of traffic, so that the baseline is a working member's.
    for (let i = 0; i < 20; i++) {
      const c = await RawH2.open(url);
      await c.alive();
      c.destroy();
    }
    const baseline = heapUsed(await metrics());
    await scrapeLoop(url);
    let ended = 0;
    let served = 0;
    let held = 0;
    await fc.assert(
      fc.asyncProperty(fc.boolean(), sequence, cuts, async (withSettings, frames, at) => {
        const c = await RawH2.open(url, { settings: withSettings ? [] : undefined, keepFrames: false });
        try {
          const all = Buffer.concat(frames);
          const points = [...new Set(at.map((x) => Math.floor(x * all.length)))].sort((a, b) => a - b);
          let from = 0;
          for (const p of [...points, all.length]) {
            if (p > from) await c.send(all.subarray(from, p));
            from = Math.max(from, p);
            await new Promise((r) => setImmediate(r));
          }
          // Served: the connection answers a PING sent after everything. Otherwise it must have said GOAWAY.
          const alive = await c.alive(10_000).catch(() => false);
          if (alive) served++;
          else {
            await c.untilClosed('the connection to close after not answering', 10_000);
            expect(c.goaway, 'a connection ended without GOAWAY').toBeDefined();
            ended++;
          }
        } finally {
          c.destroy();
        }
        // The member's loop, read every few runs so a long stall shows where it happened.
        if ((served + ended) % 25 === 0) {
          const loop = await scrapeLoop(url);
          held = Math.max(held, loop.held);
          expect(loop.held, 'the longest the member held its loop (s)').toBeLessThan(LOOP_BOUND_S);
        }
      }),
      { numRuns: RUNS, seed, endOnFailure: true },
    );
    const loop = await scrapeLoop(url);
    held = Math.max(held, loop.held);
    expect(loop.held).toBeLessThan(LOOP_BOUND_S);
    expect(cluster.isRunning('a'), 'the member is running').toBe(true);
    keepReport({ name: `frame-level fuzz, ${RUNS} connections`, held, wall: loop.wall, ms: 0 });
    console.log(`HTTP/2 fuzz: ${served} connections served to the end, ${ended} ended with GOAWAY; loop held at most ${(held * 1000).toFixed(1)} ms`);
    expect(served).toBeGreaterThan(0);
    expect(ended).toBeGreaterThan(0);
    // Memory: every connection is closed; the heap the member uses comes back near the baseline once it
    // collects (it is given time and some ordinary traffic, whose allocations prompt collections).
    let last = 0;
    await waitFor(
      'the heap back near its baseline',
      async () => {
        const c = await RawH2.open(url);
        await c.alive();
        c.destroy();
        last = heapUsed(await metrics());
        return last <= baseline + 24 * 1024 * 1024 ? true : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 500 },
    ).catch((e: unknown) => {
      throw new Error(`${(e as Error).message}: baseline ${(baseline / 2 ** 20).toFixed(1)} MiB, last ${(last / 2 ** 20).toFixed(1)} MiB`);
    });
    console.log(`HTTP/2 fuzz: heap ${(baseline / 2 ** 20).toFixed(1)} MiB before, ${(last / 2 ** 20).toFixed(1)} MiB after`);
  });
});
