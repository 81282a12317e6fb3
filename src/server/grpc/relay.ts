// Calls the client port's own server does not run itself (Lease's unary calls, Cluster, Maintenance, Auth,
// health, and anything it would not serve exactly as grpc-js does: compressed, another content type, an
// unreadable timeout, a stream with a deadline) go on, stream by stream, to grpc-js through an in-process
// HTTP/2 connection that Node's client speaks: grpc-js's behaviour unchanged, at the cost of one more hop
// in memory. The client's window on a relayed stream opens again only as grpc-js takes its data; the
// answer stops being read from grpc-js while a megabyte of it waits for the client.
import http2 from 'node:http2';
import type { ClientHttp2Session, ClientHttp2Stream, IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http2';
import { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { E_CANCEL, E_NO_ERROR, E_REFUSED_STREAM, F_END_STREAM } from '../http2/frames.js';
import { encodeHeaders } from '../http2/hpack.js';
import type { ServerStream, StreamHandler } from '../http2/server-connection.js';

/** A relayed answer stops being read from grpc-js while this much waits for the client's window. */
const RELAY_HIGH_WATER = 1024 * 1024;

/** Node's HTTP/2 header object (from grpc-js's responses) as pairs, :status first. */
function outgoingPairs(h: IncomingHttpHeaders): [string, string][] {
  const out: [string, string][] = [];
  const status = h[':status'];
  if (status !== undefined) out.push([':status', String(status)]);
  for (const [k, v] of Object.entries(h)) {
    if (k.startsWith(':') || v === undefined) continue;
    if (Array.isArray(v)) for (const x of v) out.push([k, x]);
    else out.push([k, String(v)]);
  }
  return out;
}

/** One client connection's way into grpc-js: an in-memory HTTP/2 connection, opened when first needed. */
export class RelayBackend {
  private session: ClientHttp2Session | undefined;

  /** `connect`: a new in-memory connection into grpc-js's server (its injector). */
  constructor(
    private readonly connect: () => Duplex,
    private readonly log: Logger,
  ) {}

  /** The handler of a stream relayed to grpc-js. */
  relay(stream: ServerStream, request: IncomingHttpHeaders): StreamHandler {
    return new RelayedStream(stream, request, this, this.log);
  }

  backendSession(): ClientHttp2Session {
    if (this.session && !this.session.closed && !this.session.destroyed) return this.session;
    const conn = this.connect();
    const session = http2.connect('http://setpoint.internal', { createConnection: () => conn });
    session.on('error', () => undefined); // its streams' 'close' events carry what matters
    session.once('close', () => {
      if (this.session === session) this.session = undefined;
    });
    this.session = session;
    return session;
  }

  close(): void {
    const s = this.session;
    this.session = undefined;
    s?.destroy();
  }
}

class RelayedStream implements StreamHandler {
  readonly manualWindow = true;
  readonly highWater = RELAY_HIGH_WATER;
  private req: ClientHttp2Stream | undefined;

  constructor(
    private readonly stream: ServerStream,
    private readonly request: IncomingHttpHeaders,
    private readonly backend: RelayBackend,
    private readonly log: Logger,
  ) {}

  start(): void {
    const headers: OutgoingHttpHeaders = {};
    for (const [name, value] of Object.entries(this.request)) {
      if (value === undefined) continue;
      if (name === ':path' || name === ':method') headers[name] = value;
      else if (!name.startsWith(':')) headers[name] = value; // :scheme and :authority are the internal connection's
    }
    const stream = this.stream;
    let req: ClientHttp2Stream;
    try {
      req = this.backend.backendSession().request(headers);
    } catch (e) {
      this.log.debug({ err: (e as Error).message }, 'relay refused a request');
      return stream.reset(E_REFUSED_STREAM);
    }
    this.req = req;
    // Node emits 'response' on the next tick but 'data' at once, so DATA can come before the headers it
    // must follow: it waits here until they are out.
    let responded = false;
    let early: Buffer[] = [];
    let endedEarly = false;
    let trailers: Buffer | undefined;
    let ended = false;
    const end = (): void => stream.end(trailers);
    req.on('response', (h: IncomingHttpHeaders, flags: number) => {
      const endStream = (flags & F_END_STREAM) !== 0;
      stream.headers(encodeHeaders(outgoingPairs(h)), endStream);
      responded = true;
      if (endStream) return;
      for (const chunk of early) stream.write(chunk);
      early = [];
      if (endedEarly) end();
    });
    req.on('trailers', (h: IncomingHttpHeaders) => {
      trailers = encodeHeaders(outgoingPairs(h));
    });
    req.on('data', (chunk: Buffer) => {
      if (stream.over) return;
      if (!responded) early.push(chunk);
      else if (!stream.write(chunk)) req.pause();
    });
    req.on('end', () => {
      ended = true;
      if (responded) end();
      else endedEarly = true;
    });
    req.on('error', () => undefined); // 'close' follows
    req.on('close', () => {
      if (stream.over) return;
      // Ended cleanly: its end is queued behind data still waiting for the client's window (or behind
      // its headers), and goes out after it.
      if (ended && (req.rstCode ?? E_NO_ERROR) === E_NO_ERROR) return;
      stream.reset(req.rstCode && req.rstCode !== E_NO_ERROR ? req.rstCode : E_CANCEL);
    });
  }

  data(chunk: Buffer, flowBytes: number): void {
    const stream = this.stream;
    if (!this.req) return stream.consumed(flowBytes);
    this.req.write(chunk, () => stream.consumed(flowBytes));
  }

  end(): void {
    this.req?.end();
  }

  reset(): void {
    if (this.req && !this.req.closed) this.req.close(E_CANCEL);
  }

  room(): void {
    if (this.req?.isPaused()) this.req.resume();
  }
}

/** Two Duplex ends joined in memory: what one writes, the other reads, with backpressure. */
export function duplexPair(): [Duplex, Duplex] {
  const ends: Duplex[] = [];
  // waiting[i]: the other end's write callback, held until end i's reader asks for more.
  const waiting: ((() => void) | undefined)[] = [undefined, undefined];
  const make = (self: number): Duplex => {
    const other = 1 - self;
    return new Duplex({
      read() {
        const w = waiting[self];
        waiting[self] = undefined;
        w?.();
      },
      write(chunk: Buffer, _enc, cb) {
        if ((ends[other] as Duplex).push(chunk)) cb();
        else waiting[other] = () => cb();
      },
      final(cb) {
        (ends[other] as Duplex).push(null);
        cb();
      },
      destroy(err, cb) {
        const peer = ends[other];
        if (peer && !peer.destroyed) peer.destroy();
        cb(err);
      },
    });
  };
  ends.push(make(0), make(1));
  return [ends[0] as Duplex, ends[1] as Duplex];
}
