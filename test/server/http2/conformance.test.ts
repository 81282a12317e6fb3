// What RFC 9113 asks of the server side of a gRPC connection, case by case, written from the RFC (section
// numbers beside each) against the client port's own HTTP/2 server: connection errors end the connection
// with GOAWAY and their code, stream errors reset the stream and leave the connection serving, and what
// the RFC says to ignore is ignored (the connection then still serves a call).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FixturePort } from '../helpers/client-port-harness.js';
import { startFixturePort } from '../helpers/client-port-harness.js';
import { DEFAULT_MAX_CONCURRENT_STREAMS, MAX_HEADER_LIST_SIZE } from '../../../src/server/http2/limits.js';
import { encodeHeaders } from '../../../src/server/http2/hpack.js';
import {
  E,
  F,
  RANGE,
  RawH2,
  S,
  T,
  frame,
  grpcMessage,
  headers,
  ping,
  priority,
  rangeRequest,
  requestBlock,
  rst,
  settings,
  u32,
  unaryCall,
  windowUpdate,
  WATCH,
  watchCreate,
} from './raw-h2.js';

let port: FixturePort;
beforeAll(async () => {
  port = await startFixturePort();
});
afterAll(async () => {
  RawH2.destroyAll();
  await port?.close();
});

const open = (opts?: Parameters<typeof RawH2.open>[1]): Promise<RawH2> => RawH2.open(port.endpoint, opts);

/** A Range call on stream `id` is answered OK on this connection. */
async function serves(c: RawH2, id: number): Promise<void> {
  await c.send(unaryCall(id, RANGE, rangeRequest('k')));
  await c.until(() => c.grpcStatus(id) !== undefined || c.isClosed, `stream ${id} answered`);
  expect(c.grpcStatus(id), `stream ${id}'s grpc-status`).toBe('0');
}

/** `bytes` end the connection with GOAWAY `code` (§5.4.1). */
async function connectionError(bytes: Buffer, code: number, opts?: Parameters<typeof RawH2.open>[1]): Promise<void> {
  const c = await open(opts);
  await c.send(bytes);
  await c.untilClosed('the connection to close');
  expect(c.goaway?.code, c.goaway?.debug).toBe(code);
}

/** `bytes` reset stream `id` with `code` (§5.4.2), and the connection serves on. */
async function streamError(bytes: Buffer, id: number, code: number): Promise<void> {
  const c = await open();
  await c.send(bytes);
  await c.until(() => c.resets.has(id) || c.isClosed, `stream ${id} reset`);
  expect(c.resets.get(id)).toBe(code);
  await serves(c, id + 100);
  c.destroy();
}

/** `bytes` are ignored: the connection serves a call after them. */
async function ignored(bytes: Buffer, next = 1): Promise<void> {
  const c = await open();
  await c.send(bytes);
  await serves(c, next);
  expect(c.goaway).toBeUndefined();
  c.destroy();
}

const watchOpen = (id: number): Buffer => Buffer.concat([headers(id, requestBlock(WATCH)), frame(T.DATA, 0, id, grpcMessage(watchCreate('w')))]);

describe('connection preface and SETTINGS (§3.4, §6.5)', () => {
  it('opens with SETTINGS announcing its limits, and acknowledges the client\'s', async () => {
    const c = await open({ settings: [[S.INITIAL_WINDOW_SIZE, 100_000]] });
    expect(c.frames[0]?.type).toBe(T.SETTINGS);
    expect(c.serverSettings[0]).toEqual([
      [S.MAX_CONCURRENT_STREAMS, DEFAULT_MAX_CONCURRENT_STREAMS],
      [S.MAX_HEADER_LIST_SIZE, MAX_HEADER_LIST_SIZE],
    ]);
    await c.until(() => c.frames.some((f) => f.type === T.SETTINGS && (f.flags & F.ACK) !== 0), 'a SETTINGS ACK');
    await serves(c, 1);
    c.destroy();
  });

  it('ignores settings it does not know (§6.5.2)', () => ignored(settings([[0x99, 7], [S.ENABLE_PUSH, 0]])));

  it('treats bad SETTINGS frames as connection errors', async () => {
    await connectionError(frame(T.SETTINGS, F.ACK, 0, Buffer.alloc(6)), E.FRAME_SIZE_ERROR); // ACK with a payload
    await connectionError(frame(T.SETTINGS, 0, 0, Buffer.alloc(5)), E.FRAME_SIZE_ERROR); // not a multiple of 6
    await connectionError(frame(T.SETTINGS, 0, 1, Buffer.alloc(0)), E.PROTOCOL_ERROR); // on a stream
    await connectionError(settings([[S.ENABLE_PUSH, 2]]), E.PROTOCOL_ERROR);
    await connectionError(settings([[S.INITIAL_WINDOW_SIZE, 2 ** 31]]), E.FLOW_CONTROL_ERROR);
    await connectionError(settings([[S.MAX_FRAME_SIZE, 16_383]]), E.PROTOCOL_ERROR);
    await connectionError(settings([[S.MAX_FRAME_SIZE, 2 ** 24]]), E.PROTOCOL_ERROR);
  });

  it('takes a frame size the client announces for what it sends back (§6.5.2), and a smaller header table', async () => {
    const c = await open({ settings: [[S.MAX_FRAME_SIZE, 65_536], [S.HEADER_TABLE_SIZE, 0]] });
    await serves(c, 1);
    await serves(c, 3);
    c.destroy();
  });
});

describe('frame sizes, padding, unknown and PRIORITY frames (§4.2, §5.5, §6.1-6.3)', () => {
  it('refuses a frame larger than its SETTINGS_MAX_FRAME_SIZE (16,384)', () => connectionError(frame(T.DATA, 0, 1, Buffer.alloc(16_385)), E.FRAME_SIZE_ERROR));

  it('ignores unknown frame types and unknown flags', () => ignored(Buffer.concat([frame(0x20, 0xff, 0, Buffer.from('x')), frame(0x21, 0, 5, Buffer.alloc(3)), ping(false, Buffer.alloc(8)).fill(0xf0, 4, 5)])));

  it('refuses an unknown frame inside a header block (§4.3)', () =>
    connectionError(Buffer.concat([headers(1, requestBlock(RANGE), 0), frame(0x20, 0, 0)]), E.PROTOCOL_ERROR));

  it('takes padded HEADERS and DATA, padding counted by flow control and dropped', async () => {
    const block = requestBlock(RANGE);
    const padded = (b: Buffer, pad: number): Buffer => Buffer.concat([Buffer.from([pad]), b, Buffer.alloc(pad)]);
    const c = await open();
    await c.send(Buffer.concat([frame(T.HEADERS, F.END_HEADERS | F.PADDED, 1, padded(block, 40)), frame(T.DATA, F.END_STREAM | F.PADDED, 1, padded(grpcMessage(rangeRequest('k')), 200))]));
    await c.until(() => c.grpcStatus(1) !== undefined || c.isClosed, 'the padded call answered');
    expect(c.grpcStatus(1)).toBe('0');
    c.destroy();
  });

  it('refuses padding as long as the frame (§6.1: PROTOCOL_ERROR)', async () => {
    await connectionError(frame(T.HEADERS, F.END_HEADERS | F.PADDED, 1, Buffer.from([5, 0x82, 0x84])), E.PROTOCOL_ERROR);
    await connectionError(Buffer.concat([headers(1, requestBlock(RANGE)), frame(T.DATA, F.PADDED, 1, Buffer.from([3, 1, 2]))]), E.PROTOCOL_ERROR);
  });

  it('ignores PRIORITY frames on idle, open and closed streams, and HEADERS with priority fields (§5.3.2)', async () => {
    const c = await open();
    await c.send(Buffer.concat([priority(7, 0), priority(9, 7, 200)]));
    const withPriority = Buffer.concat([u32(0), Buffer.from([16]), requestBlock(RANGE)]);
    await c.send(Buffer.concat([frame(T.HEADERS, F.END_HEADERS | F.PRIORITY, 1, withPriority), priority(1, 0), frame(T.DATA, F.END_STREAM, 1, grpcMessage(rangeRequest('k')))]));
    await c.until(() => c.grpcStatus(1) !== undefined || c.isClosed, 'stream 1 answered');
    expect(c.grpcStatus(1)).toBe('0');
    await c.send(priority(1, 0)); // closed now
    await serves(c, 11);
    c.destroy();
  });

  it('checks PRIORITY frames all the same: stream 0 is a connection error, a wrong size or a self-dependency a stream error', async () => {
    await connectionError(priority(0, 1), E.PROTOCOL_ERROR);
    await streamError(Buffer.concat([watchOpen(1), frame(T.PRIORITY, 0, 1, Buffer.alloc(4))]), 1, E.FRAME_SIZE_ERROR);
    await streamError(Buffer.concat([watchOpen(1), priority(1, 1)]), 1, E.PROTOCOL_ERROR);
  });
});

describe('stream identifiers and states (§5.1, §5.1.1)', () => {
  it('refuses an even stream id, and frames other than HEADERS and PRIORITY on an idle stream', async () => {
    await connectionError(headers(2, requestBlock(RANGE)), E.PROTOCOL_ERROR);
    await connectionError(frame(T.DATA, 0, 1, grpcMessage(rangeRequest('k'))), E.PROTOCOL_ERROR);
    await connectionError(rst(1, E.CANCEL), E.PROTOCOL_ERROR);
    await connectionError(windowUpdate(3, 100), E.PROTOCOL_ERROR);
  });

  it('refuses HEADERS on a stream that is closed (one it never reset)', async () => {
    const c = await open();
    await serves(c, 1);
    await c.send(headers(1, requestBlock(RANGE), F.END_HEADERS | F.END_STREAM));
    await c.untilClosed('the connection to close');
    expect(c.goaway?.code).toBe(E.STREAM_CLOSED);
  });

  it('refuses a new stream with an id below one already used (it is closed: §5.1.1)', async () => {
    const c = await open();
    await serves(c, 5);
    await c.send(headers(3, requestBlock(RANGE), F.END_HEADERS | F.END_STREAM));
    await c.untilClosed('the connection to close');
    expect(c.goaway?.code).toBe(E.STREAM_CLOSED);
  });

  it('resets a half-closed (remote) stream that gets DATA or a second trailers (§5.1: STREAM_CLOSED)', async () => {
    const trailers = (id: number): Buffer => headers(id, encodeHeaders([['x-t', '1']]), F.END_HEADERS | F.END_STREAM);
    await streamError(Buffer.concat([watchOpen(1), trailers(1), frame(T.DATA, 0, 1, Buffer.from('late'))]), 1, E.STREAM_CLOSED);
    await streamError(Buffer.concat([watchOpen(1), trailers(1), trailers(1)]), 1, E.STREAM_CLOSED);
  });

  it('ignores what a client sends on a stream after it reset it, or after the server reset it (§5.4.2, §6.4)', async () => {
    const c = await open();
    await c.send(Buffer.concat([watchOpen(1), rst(1, E.CANCEL), windowUpdate(1, 10), priority(1, 0), rst(1, E.CANCEL)]));
    await serves(c, 3);
    // Stream 5 is reset by the server (a zero WINDOW_UPDATE); the client's trailers and data already on their way are dropped.
    await c.send(Buffer.concat([watchOpen(5), windowUpdate(5, 0)]));
    await c.until(() => c.resets.has(5), 'stream 5 reset');
    await c.send(Buffer.concat([frame(T.DATA, 0, 5, Buffer.from('late')), headers(5, encodeHeaders([['x-t', '1']]), F.END_HEADERS | F.END_STREAM)]));
    await serves(c, 7);
    c.destroy();
  });

  it('answers a client that ends its side with trailers instead of an empty DATA frame', async () => {
    const c = await open();
    await c.send(Buffer.concat([headers(1, requestBlock(RANGE)), frame(T.DATA, 0, 1, grpcMessage(rangeRequest('k'))), headers(1, encodeHeaders([['x-t', '1']]), F.END_HEADERS | F.END_STREAM)]));
    await c.until(() => c.grpcStatus(1) !== undefined || c.isClosed, 'stream 1 answered');
    expect(c.grpcStatus(1)).toBe('0');
    c.destroy();
  });

  it('refuses trailers that do not end the stream, or hold pseudo-header fields (§8.1: malformed)', async () => {
    await streamError(Buffer.concat([watchOpen(1), headers(1, encodeHeaders([['x-t', '1']]))]), 1, E.PROTOCOL_ERROR);
    await streamError(Buffer.concat([watchOpen(1), headers(1, encodeHeaders([[':path', '/x']]), F.END_HEADERS | F.END_STREAM)]), 1, E.PROTOCOL_ERROR);
  });
});

describe('header blocks and CONTINUATION (§4.3, §6.10)', () => {
  it('takes a block split over CONTINUATION frames, and refuses CONTINUATION without HEADERS or for another stream', async () => {
    const block = requestBlock(RANGE);
    const c = await open();
    await c.send(Buffer.concat([headers(1, block.subarray(0, 10), 0), frame(T.CONTINUATION, 0, 1, block.subarray(10, 20)), frame(T.CONTINUATION, F.END_HEADERS, 1, block.subarray(20)), frame(T.DATA, F.END_STREAM, 1, grpcMessage(rangeRequest('k')))]));
    await c.until(() => c.grpcStatus(1) !== undefined || c.isClosed, 'stream 1 answered');
    expect(c.grpcStatus(1)).toBe('0');
    c.destroy();
    await connectionError(frame(T.CONTINUATION, F.END_HEADERS, 1, block), E.PROTOCOL_ERROR);
    await connectionError(Buffer.concat([headers(1, block.subarray(0, 10), 0), frame(T.CONTINUATION, F.END_HEADERS, 3, block.subarray(10))]), E.PROTOCOL_ERROR);
  });

  it('ends the connection on a block it cannot decode (§4.3: COMPRESSION_ERROR)', () => connectionError(headers(1, Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff])), E.COMPRESSION_ERROR));
});

describe('malformed requests (§8.2, §8.3.1): the stream is reset with PROTOCOL_ERROR', () => {
  const base: [string, string][] = [[':method', 'POST'], [':scheme', 'http'], [':path', RANGE], ['content-type', 'application/grpc']];
  const cases: [string, [string, string][]][] = [
    ['an uppercase field name', [...base, ['X-Upper', '1']]],
    ['a connection-specific field', [...base, ['connection', 'keep-alive']]],
    ['te other than trailers', [...base, ['te', 'gzip']]],
    ['a pseudo-header field after a regular one', [[':method', 'POST'], ['content-type', 'application/grpc'], [':scheme', 'http'], [':path', RANGE]]],
    ['an unknown pseudo-header field', [...base.slice(0, 3), [':protocol', 'x'], ['content-type', 'application/grpc']]],
    ['a response pseudo-header field', [[':status', '200'], ...base]],
    [':path twice', [...base.slice(0, 3), [':path', RANGE], ['content-type', 'application/grpc']]],
    ['no :path', [[':method', 'POST'], [':scheme', 'http'], ['content-type', 'application/grpc']]],
    ['an empty :path', [[':method', 'POST'], [':scheme', 'http'], [':path', ''], ['content-type', 'application/grpc']]],
    ['a value with a line feed', [...base, ['x-v', 'a\nb']]],
    ['a value with leading whitespace', [...base, ['x-v', ' a']]],
    ['an empty field name', [...base, ['', 'x']]],
  ];
  for (const [what, fields] of cases) {
    it(`refuses ${what}`, () => streamError(Buffer.concat([headers(1, encodeHeaders(fields)), frame(T.DATA, F.END_STREAM, 1, grpcMessage(rangeRequest('k')))]), 1, E.PROTOCOL_ERROR));
  }

  it('takes a Go client\'s :authority that is a whole URL (passthrough:///http://host:port)', async () => {
    const c = await open();
    await c.send(Buffer.concat([headers(1, encodeHeaders([[':method', 'POST'], [':scheme', 'http'], [':path', RANGE], [':authority', 'http://127.0.0.1:2379'], ['content-type', 'application/grpc']])), frame(T.DATA, F.END_STREAM, 1, grpcMessage(rangeRequest('k')))]));
    await c.until(() => c.grpcStatus(1) !== undefined || c.isClosed, 'stream 1 answered');
    expect(c.grpcStatus(1)).toBe('0');
    c.destroy();
  });
});

describe('RST_STREAM, PING, GOAWAY, PUSH_PROMISE (§6.4-6.8)', () => {
  it('checks RST_STREAM\'s size and stream', async () => {
    await connectionError(Buffer.concat([watchOpen(1), frame(T.RST_STREAM, 0, 1, Buffer.alloc(3))]), E.FRAME_SIZE_ERROR);
    await connectionError(rst(0, E.CANCEL), E.PROTOCOL_ERROR);
  });

  it('answers a PING with its payload and ACK, answers no PING ACK, and checks PING\'s size and stream', async () => {
    const c = await open();
    await c.send(Buffer.concat([ping(true, Buffer.from('unasked!')), ping(false, Buffer.from('12345678'))]));
    await c.until(() => c.count(T.PING) > 0, 'a PING ACK');
    const acks = c.frames.filter((f) => f.type === T.PING);
    expect(acks.map((f) => [f.flags, f.payload.toString()])).toEqual([[F.ACK, '12345678']]);
    c.destroy();
    await connectionError(frame(T.PING, 0, 0, Buffer.alloc(7)), E.FRAME_SIZE_ERROR);
    await connectionError(frame(T.PING, 0, 1, Buffer.alloc(8)), E.PROTOCOL_ERROR);
  });

  it('keeps answering the streams open when the client sends GOAWAY, and checks GOAWAY\'s stream', async () => {
    const c = await open();
    await c.send(Buffer.concat([frame(T.GOAWAY, 0, 0, Buffer.concat([u32(0), u32(E.NO_ERROR)])), unaryCall(1, RANGE, rangeRequest('k'))]));
    await c.until(() => c.grpcStatus(1) !== undefined || c.isClosed, 'stream 1 answered');
    expect(c.grpcStatus(1)).toBe('0');
    c.destroy();
    await connectionError(frame(T.GOAWAY, 0, 1, Buffer.alloc(8)), E.PROTOCOL_ERROR);
  });

  it('refuses PUSH_PROMISE from a client (§8.4)', () => connectionError(frame(T.PUSH_PROMISE, F.END_HEADERS, 1, Buffer.alloc(4)), E.PROTOCOL_ERROR));
});

// DATA past the connection window this side announced is in grpc/front.test.ts, on bytes handed over at once:
// over a socket, the window may come back between two reads.
describe('flow control (§5.2, §6.9)', () => {
  it('refuses a zero WINDOW_UPDATE: on the connection a connection error, on a stream a stream error', async () => {
    await connectionError(windowUpdate(0, 0), E.PROTOCOL_ERROR);
    await streamError(Buffer.concat([watchOpen(1), windowUpdate(1, 0)]), 1, E.PROTOCOL_ERROR);
  });

  it('refuses a window past 2^31-1: the connection\'s, a stream\'s, and a stream\'s through SETTINGS_INITIAL_WINDOW_SIZE', async () => {
    await connectionError(windowUpdate(0, 2 ** 31 - 1), E.FLOW_CONTROL_ERROR);
    await streamError(Buffer.concat([watchOpen(1), windowUpdate(1, 2 ** 31 - 1)]), 1, E.FLOW_CONTROL_ERROR);
    const c = await open();
    await c.send(watchOpen(1));
    await c.until(() => c.headerBlocks.has(1), 'the watch answered');
    await c.send(Buffer.concat([windowUpdate(1, 2 ** 31 - 1 - (65_535 - (c.dataBytes.get(1) ?? 0))), settings([[S.INITIAL_WINDOW_SIZE, 65_536]])]));
    await c.untilClosed('the connection to close');
    expect(c.goaway?.code).toBe(E.FLOW_CONTROL_ERROR);
  });

  it('sends no more than the client\'s window, then the rest as the window opens', async () => {
    const value = Buffer.alloc(40_000, 0x77);
    await port.store.put({ key: Buffer.from('fc'), value });
    const c = await open({ settings: [[S.INITIAL_WINDOW_SIZE, 1000]] });
    await c.send(unaryCall(1, RANGE, rangeRequest('fc')));
    await c.until(() => (c.dataBytes.get(1) ?? 0) >= 1000, 'the first 1000 bytes');
    expect(c.dataBytes.get(1)).toBe(1000);
    await c.send(windowUpdate(1, 100_000));
    await c.until(() => c.grpcStatus(1) !== undefined || c.isClosed, 'the answer');
    expect(c.grpcStatus(1)).toBe('0');
    expect(c.dataBytes.get(1)).toBeGreaterThan(value.length);
    c.destroy();
  });
});
