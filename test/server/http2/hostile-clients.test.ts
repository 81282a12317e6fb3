// Issue 25 §1: the client port's HTTP/2 server survives hostile clients. Every attack here speaks raw
// HTTP/2 to the leader of a real three-member cluster (`setpoint store` processes) and must end with the
// offender's connection closed by a GOAWAY with the right code, or its stream reset, after bounded work,
// while a bystander on the same member keeps being served, no election happens and the member's loop is
// never held past attack-rig.ts's bound (400 ms here; the 50 ms target is `npm run bench:hostile`'s). The attacks: header floods (many fields, huge decoded size, one-byte
// indexed fields repeated), CONTINUATION floods (empty frames included), Rapid Reset (CVE-2023-44487), the
// 2019 family (CVE-2019-9511 to 9518), MAX_CONCURRENT_STREAMS, a window overflow through
// SETTINGS_INITIAL_WINDOW_SIZE, and control frames queued for a client that does not read.
import { describe, expect, it } from 'vitest';
import { AttackRig } from './attack-rig.js';
import {
  E,
  F,
  RANGE,
  RawH2,
  S,
  T,
  WATCH,
  frame,
  grpcMessage,
  headerFrames,
  headers,
  literal,
  ping,
  priority,
  rangeRequest,
  requestBlock,
  rst,
  settings,
  unaryCall,
  watchCreate,
  windowUpdate,
} from './raw-h2.js';

/** `n` copies of `unit`, `perWrite` to a socket write. */
function* batches(unit: (i: number) => Buffer, n: number, perWrite = 1000): Generator<Buffer> {
  for (let i = 0; i < n; i += perWrite) {
    const parts: Buffer[] = [];
    for (let j = i; j < Math.min(n, i + perWrite); j++) parts.push(unit(j));
    yield Buffer.concat(parts);
  }
}

/** The offender's connection ended with GOAWAY `code` (read to its end). */
async function expectGoaway(c: RawH2, code: number, what: string): Promise<void> {
  await c.untilClosed(`${what}: the server to close the connection`);
  expect(c.goaway, `${what}: GOAWAY`).toBeDefined();
  expect(c.goaway?.code, `${what}: GOAWAY's code (${c.goaway?.debug})`).toBe(code);
}

/** A Watch stream's opening: HEADERS and one create request, the stream left open. */
const openWatch = (id: number, key = 'w'): Buffer => Buffer.concat([headers(id, requestBlock(WATCH)), frame(T.DATA, 0, id, grpcMessage(watchCreate(key)))]);

/** Stores `value` at `key` through the target member. */
async function putValue(rig: AttackRig, key: string, value: Buffer): Promise<void> {
  await rig.cluster.memberClient(rig.target).put(key).value(value);
}

describe('HTTP/2 header floods', () => {
  it('resets a stream whose header list is too long, too large, or one-byte fields repeated, and closes a connection that keeps at it', async () => {
    const rig = await AttackRig.start();

    await rig.attack('5,000 header fields', async (url) => {
      const c = await RawH2.open(url);
      const many = Buffer.concat([requestBlock(RANGE), ...Array.from({ length: 5000 }, (_, i) => literal('x-f', String(i % 100).padStart(2, '0'), false))]);
      await c.send(headerFrames(1, many, true));
      await c.until(() => c.resets.has(1) || c.isClosed, 'stream 1 to be reset', 10_000);
      expect(c.resets.get(1), 'stream 1 reset').toBe(E.ENHANCE_YOUR_CALM);
      expect(await c.alive(), 'the connection goes on').toBe(true);
      c.destroy();
    });

    await rig.attack('a 16 KiB block of one-byte references to a 4 KB dynamic table entry', async (url) => {
      const c = await RawH2.open(url);
      // Stream 1 puts a 4,000-byte field into the server's table (literal with incremental indexing)...
      const add = literal('x-big', Buffer.alloc(3950, 0x61), true);
      await c.send(Buffer.concat([headers(1, Buffer.concat([requestBlock(RANGE), add])), frame(T.DATA, F.END_STREAM, 1, grpcMessage(rangeRequest('k')))]));
      await c.until(() => c.grpcStatus(1) !== undefined || c.isClosed, 'stream 1 answered');
      expect(c.grpcStatus(1)).toBe('0');
      // ...then stream 3 refers to it 16,000 times, one byte each: 64 MB of decoded header list.
      await c.send(headers(3, Buffer.concat([requestBlock(RANGE), Buffer.alloc(16_000, 0xbe)]), F.END_HEADERS | F.END_STREAM));
      await c.until(() => c.resets.has(3) || c.isClosed, 'stream 3 to be reset', 10_000);
      expect(c.resets.get(3)).toBe(E.ENHANCE_YOUR_CALM);
      expect(await c.alive()).toBe(true);
      c.destroy();
    });

    await rig.attack('16,000 one-byte static fields, on stream after stream', async (url) => {
      const c = await RawH2.open(url);
      const block = Buffer.concat([requestBlock(RANGE), Buffer.alloc(16_000, 0x82)]);
      await c.send(headers(1, block, F.END_HEADERS | F.END_STREAM));
      await c.until(() => c.resets.has(1) || c.isClosed, 'stream 1 to be reset', 10_000);
      expect(c.resets.get(1)).toBe(E.ENHANCE_YOUR_CALM);
      // The same on stream after stream: each costs little, and a client that never stops is cut off.
      await c.sendAll(batches((i) => headers(3 + 2 * i, block, F.END_HEADERS | F.END_STREAM), 5000, 20));
      await expectGoaway(c, E.ENHANCE_YOUR_CALM, 'repeated oversized header lists');
    });
  });
});

describe('CONTINUATION floods', () => {
  it('closes a connection whose header block goes on and on, in empty CONTINUATION frames or full ones', async () => {
    const rig = await AttackRig.start();

    await rig.attack('empty CONTINUATION frames without end', async (url) => {
      const c = await RawH2.open(url);
      await c.send(headers(1, requestBlock(RANGE), 0));
      const sent = await c.sendAll(batches(() => frame(T.CONTINUATION, 0, 1), 1_000_000, 10_000));
      await c.until(() => c.isClosed || c.goaway !== undefined, 'a GOAWAY', 10_000).catch(() => undefined);
      expect(c.goaway, `GOAWAY after ${sent} writes of 10,000 empty frames`).toBeDefined();
      await expectGoaway(c, E.ENHANCE_YOUR_CALM, 'empty CONTINUATION flood');
    });

    await rig.attack('1 KiB CONTINUATION frames without end', async (url) => {
      const c = await RawH2.open(url);
      await c.send(headers(1, requestBlock(RANGE), 0));
      await c.sendAll(batches(() => frame(T.CONTINUATION, 0, 1, Buffer.alloc(1024, 0x82)), 100_000, 100));
      await expectGoaway(c, E.ENHANCE_YOUR_CALM, 'CONTINUATION flood');
    });
  });
});

describe('Rapid Reset (CVE-2023-44487)', () => {
  it('closes a connection that opens streams and resets them at once, after bounded work', async () => {
    const rig = await AttackRig.start();
    const N = 50_000;
    await rig.attack('HEADERS then RST_STREAM, 50,000 times', async (url) => {
      const c = await RawH2.open(url);
      await c.sendAll(batches((i) => Buffer.concat([unaryCall(1 + 2 * i, RANGE, rangeRequest('k')), rst(1 + 2 * i, E.CANCEL)]), N, 500));
      await expectGoaway(c, E.ENHANCE_YOUR_CALM, 'rapid reset');
      // Bounded: the server stopped taking streams long before the client stopped sending them.
      expect(c.goaway?.lastStreamId ?? Infinity).toBeLessThan(2 * 5000);
    });
  });
});

describe('the 2019 HTTP/2 denial-of-service family (CVE-2019-9511 to 9518)', () => {
  it('data dribble, ping flood, resource loop and reset flood', async () => {
    const rig = await AttackRig.start();
    await putValue(rig, 'dribble', Buffer.alloc(64 * 1024, 0x64));

    await rig.attack('data dribble (9511): 1-byte windows opened one byte at a time', async (url) => {
      const c = await RawH2.open(url, { settings: [[S.INITIAL_WINDOW_SIZE, 1]] });
      await c.send(Buffer.concat([windowUpdate(0, 2 ** 30), ...Array.from({ length: 50 }, (_, i) => unaryCall(1 + 2 * i, RANGE, rangeRequest('dribble')))]));
      await c.sendAll(batches((i) => windowUpdate(1 + 2 * (i % 50), 1), 500_000, 2000));
      await expectGoaway(c, E.ENHANCE_YOUR_CALM, 'data dribble');
    });

    await rig.attack('ping flood (9512)', async (url) => {
      const c = await RawH2.open(url, { settings: [], keepFrames: false });
      await c.sendAll(batches(() => ping(), 500_000, 5000));
      await expectGoaway(c, E.ENHANCE_YOUR_CALM, 'ping flood');
    });

    await rig.attack('resource loop (9513): PRIORITY frames reshuffling the dependency tree', async (url) => {
      const c = await RawH2.open(url, { settings: [], keepFrames: false });
      await c.sendAll(batches((i) => priority(1 + 2 * (i % 101), 1 + 2 * ((i * 7) % 101)), 500_000, 5000));
      await expectGoaway(c, E.ENHANCE_YOUR_CALM, 'resource loop');
    });

    await rig.attack('reset flood (9514): requests that each earn a RST_STREAM, answers not read', async (url) => {
      const c = await RawH2.open(url, { settings: [], keepFrames: false });
      c.sock.pause();
      // A zero WINDOW_UPDATE on an open stream is a stream error: the server resets each one.
      const sending = c.sendAll(batches((i) => Buffer.concat([headers(1 + 2 * i, requestBlock(WATCH)), windowUpdate(1 + 2 * i, 0)]), 50_000, 200));
      await Promise.race([sending, c.closed]);
      c.sock.resume();
      await expectGoaway(c, E.ENHANCE_YOUR_CALM, 'reset flood');
    });
  });

  it('settings flood, zero-length headers, internal data buffering and empty frames', async () => {
    const rig = await AttackRig.start();

    await rig.attack('settings flood (9515), acknowledgements not read', async (url) => {
      const c = await RawH2.open(url, { settings: [], keepFrames: false });
      c.sock.pause();
      const sending = c.sendAll(batches(() => settings([[S.INITIAL_WINDOW_SIZE, 65_535], [S.HEADER_TABLE_SIZE, 4096]]), 500_000, 5000));
      await Promise.race([sending, c.closed]);
      c.sock.resume();
      await expectGoaway(c, E.ENHANCE_YOUR_CALM, 'settings flood');
    });

    await rig.attack('zero-length headers (9516)', async (url) => {
      const c = await RawH2.open(url, { settings: [], keepFrames: false });
      // 100 fields with an empty name and value each, added to the table (literal with incremental indexing).
      const block = Buffer.concat([requestBlock(RANGE), Buffer.alloc(300, 0).fill(Buffer.from([0x40, 0x00, 0x00]))]);
      await c.send(headers(1, block, F.END_HEADERS | F.END_STREAM));
      await c.until(() => c.resets.has(1) || c.isClosed, 'stream 1 to be reset', 10_000);
      expect(c.resets.get(1)).toBe(E.PROTOCOL_ERROR);
      await c.sendAll(batches((i) => headers(3 + 2 * i, block, F.END_HEADERS | F.END_STREAM), 20_000, 100));
      await expectGoaway(c, E.ENHANCE_YOUR_CALM, 'zero-length headers');
    });

    // 256 KiB answers, 400 of them: 100 MB the client would have the member hold. (Reading many large
    // values at once holds the loop by itself, however the answers are sent: that is issue 25 §2's.)
    await putValue(rig, 'buffered', Buffer.alloc(256 * 1024, 0x62));
    await rig.attack('internal data buffering (9517): 256 KiB answers requested and never read', async (url) => {
      const c = await RawH2.open(url, { settings: [[S.INITIAL_WINDOW_SIZE, 2 ** 31 - 1]], keepFrames: false });
      c.sock.pause();
      const sending = c.sendAll(batches((i) => unaryCall(1 + 2 * i, RANGE, rangeRequest('buffered')), 400, 1));
      await Promise.race([sending, c.closed]);
      c.sock.resume();
      await expectGoaway(c, E.ENHANCE_YOUR_CALM, 'internal data buffering');
      // Bounded: streams beyond what the connection may hold were refused, not answered.
      expect([...c.resets.values()]).toContain(E.ENHANCE_YOUR_CALM);
    });

    await rig.attack('empty frames (9518): empty DATA frames on an open stream', async (url) => {
      const c = await RawH2.open(url, { settings: [], keepFrames: false });
      await c.send(openWatch(1));
      await c.sendAll(batches(() => frame(T.DATA, 0, 1), 500_000, 5000));
      await expectGoaway(c, E.ENHANCE_YOUR_CALM, 'empty frames');
    });

    // The bound is on what a client leaves unread, not on one answer: a single answer larger than the
    // connection's buffer (36 MiB here, 32 MiB the bound; a 500,000-key delete's prev_kvs is as large) is
    // served whole to a client that reads it, as etcd serves answers up to 2 GiB.
    const MiB = 1024 * 1024;
    for (let i = 0; i < 36; i++) await putValue(rig, `large/${String(i).padStart(2, '0')}`, Buffer.alloc(MiB, 0x61 + (i % 26)));
    const got = await rig.cluster.memberClient(rig.target).getAll().prefix('large/').buffers();
    expect(Object.keys(got)).toHaveLength(36);
    expect(Object.values(got).reduce((n, b) => n + b.length, 0)).toBe(36 * MiB);
    // And while that answer waits on a client that reads it slowly (its stream's window shut), the same
    // connection's small calls are answered, as from etcd: clients sharing one connection (grpc-js pools
    // them) are not refused behind one big answer. Not an attack: making a 36 MiB answer is a big request,
    // whose hold on the loop is issue 25 §2's (`npm run bench:big`), so no loop bound applies here.
    {
      const c = await RawH2.open(rig.url, { settings: [], keepFrames: false });
      await c.send(Buffer.concat([windowUpdate(0, 2 ** 31 - 1 - 65_535), unaryCall(1, RANGE, rangeRequest('large/', 'large0'))]));
      await c.until(() => (c.dataBytes.get(1) ?? 0) >= 65_535 || c.isClosed, 'the big answer to fill its window');
      await c.send(unaryCall(3, RANGE, rangeRequest('k')));
      await c.until(() => c.grpcStatus(3) !== undefined || c.isClosed, 'the small call answered');
      expect(c.grpcStatus(3)).toBe('0');
      expect(c.resets.size).toBe(0);
      expect(c.goaway).toBeUndefined();
      c.destroy();
    }
  });
});

describe('stream and window limits', () => {
  it('announces and enforces --max-concurrent-streams, refuses a window past 2^31-1, and bounds control frames a client does not read', async () => {
    const rig = await AttackRig.start(['--max-concurrent-streams', '20']);

    await rig.attack('more concurrent streams than announced', async (url) => {
      const c = await RawH2.open(url);
      await c.until(() => c.serverSettings.length > 0, "the server's SETTINGS");
      expect(c.serverSettings[0]).toContainEqual([S.MAX_CONCURRENT_STREAMS, 20]);
      await c.send(Buffer.concat(Array.from({ length: 20 }, (_, i) => openWatch(1 + 2 * i))));
      await c.until(() => (c.headerBlocks.size >= 20) || c.isClosed, 'twenty watch streams answered');
      await c.send(openWatch(41));
      await c.until(() => c.resets.has(41) || c.isClosed, 'the 21st stream refused', 10_000);
      expect(c.resets.get(41)).toBe(E.REFUSED_STREAM);
      expect(await c.alive()).toBe(true);
      // A client that keeps opening streams past the limit is cut off.
      await c.sendAll(batches((i) => openWatch(43 + 2 * i), 20_000, 100));
      await expectGoaway(c, E.ENHANCE_YOUR_CALM, 'streams past the limit');
    });

    await rig.attack('SETTINGS_INITIAL_WINDOW_SIZE pushing an open stream past 2^31-1', async (url) => {
      const c = await RawH2.open(url);
      await c.send(openWatch(1));
      await c.until(() => c.headerBlocks.has(1) || c.isClosed, 'the watch answered');
      // The server's window on the stream is 65,535 less what it sent: this brings it to exactly 2^31-1.
      await c.send(windowUpdate(1, 2 ** 31 - 1 - (65_535 - (c.dataBytes.get(1) ?? 0))));
      expect(await c.alive()).toBe(true);
      await c.send(settings([[S.INITIAL_WINDOW_SIZE, 65_536]])); // +1 on every open stream
      await expectGoaway(c, E.FLOW_CONTROL_ERROR, 'window overflow');
    });

    await putValue(rig, 'stuck', Buffer.alloc(1024 * 1024, 0x73));
    await rig.attack('PING and SETTINGS acknowledgements queued for a client that does not read', async (url) => {
      const c = await RawH2.open(url, { settings: [[S.INITIAL_WINDOW_SIZE, 2 ** 31 - 1]], keepFrames: false });
      c.sock.pause();
      // Answers the client does not read fill the socket; the control frames it then asks for have nowhere to go.
      await c.send(Buffer.concat([windowUpdate(0, 2 ** 31 - 1 - 65_535), ...Array.from({ length: 8 }, (_, i) => unaryCall(1 + 2 * i, RANGE, rangeRequest('stuck')))]));
      await rig.cluster.memberClient(rig.target).get('stuck').buffer(); // the answers are made by now
      // PINGs, which a client may send as often as it likes as long as it reads the answers (grpc-go's BDP pings).
      const sending = c.sendAll(batches(() => ping(), 5000, 10));
      await Promise.race([sending, c.closed]);
      c.sock.resume();
      await expectGoaway(c, E.ENHANCE_YOUR_CALM, 'unread acknowledgements');
    });
  });
});

describe('a well-behaved client beside the limits', () => {
  it('is served: big header blocks under the limits, many PINGs spread out, streams up to the limit', async () => {
    const rig = await AttackRig.start(['--max-concurrent-streams', '20']);
    await rig.attack('nothing hostile', async (url) => {
      const c = await RawH2.open(url);
      // 100 fields of 500 bytes each (about 53 KB of header list, under 64 KiB), over CONTINUATION frames.
      const block = Buffer.concat([requestBlock(RANGE), ...Array.from({ length: 100 }, (_, i) => literal(`x-${String(i).padStart(3, '0')}`, Buffer.alloc(500, 0x76), false))]);
      await c.send(Buffer.concat([headerFrames(1, block, false), frame(T.DATA, F.END_STREAM, 1, grpcMessage(rangeRequest('k')))]));
      await c.until(() => c.grpcStatus(1) !== undefined || c.isClosed, 'the big request answered');
      expect(c.grpcStatus(1)).toBe('0');
      for (let i = 0; i < 20; i++) expect(await c.alive()).toBe(true);
      await c.send(Buffer.concat(Array.from({ length: 20 }, (_, i) => unaryCall(3 + 2 * i, RANGE, rangeRequest('k')))));
      await c.until(() => [...Array(20).keys()].every((i) => c.grpcStatus(3 + 2 * i) !== undefined) || c.isClosed, 'twenty calls answered');
      expect(c.resets.size).toBe(0);
      expect(c.goaway).toBeUndefined();
      c.destroy();
    });
  });
});
