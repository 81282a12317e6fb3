// The inbound Raft message stream (Peer.Send) as the peer server handles it, in two forms: the grpc-js
// call, and the same call read straight off its HTTP/2 stream. The second is the one peers use. grpc-js
// hands each message through a stream decoder, an interceptor chain and an object-mode Readable before
// the handler sees it; between two member processes that added 60–100 µs to a message's round trip
// (150–190 µs against 90 µs for bare HTTP/2), and a write goes through four such hops before a client
// hears back. The wire does not change: the same headers, length-prefixed protobuf messages, response
// headers, summary and trailers, so a grpc-js peer on the other end cannot tell the difference.
import { Metadata, status } from '@grpc/grpc-js';
import type { sendUnaryData, ServerReadableStream, ServiceError } from '@grpc/grpc-js';
import { constants as h2 } from 'node:http2';
import type { IncomingHttpHeaders, ServerHttp2Stream } from 'node:http2';
import { frameMessages, MessageReader } from '../grpc/coalesce.js';
import { first, servable } from '../grpc/fast-unary.js';
import { OK_TRAILERS, RESPONSE_HEADERS, STATUS_AND_TYPE, statusTrailers } from '../grpc/wire-status.js';
import { peerService } from './proto.js';
import type { SendBatch, WireSendSummary } from './proto.js';

/** A failed end of a call: a gRPC status, with trailing metadata (a refusal's code) if any. */
export type SendFailure = Partial<ServiceError>;

/** One inbound Send call, whichever path serves it. */
export interface SendCall {
  /** A request header (call metadata), as a string. */
  header(key: string): string | undefined;
  /** The caller's address, for logs. */
  readonly peer: string;
  /** Response headers, before any answer: the sender's sign that it is connected. */
  accept(): void;
  /** Ends the call with the summary, or with a failure. Only the first end counts. */
  end(result: WireSendSummary | SendFailure): void;
  /** Each batch as it arrives; then `ended` when the sender closes its side, or `cancelled` if the call breaks. */
  listen(on: { batch(b: SendBatch): void; ended(): void; cancelled(): void }): void;
}

const isFailure = (r: WireSendSummary | SendFailure): r is SendFailure => 'code' in r;

/** Reads call metadata as SendCall.header does: the first value, if it is a string. */
export function headerOf(md: Metadata): (key: string) => string | undefined {
  return (key) => {
    const v = md.get(key)[0];
    return typeof v === 'string' ? v : undefined;
  };
}

/** The grpc-js form. */
export function grpcSendCall(call: ServerReadableStream<SendBatch, WireSendSummary>, callback: sendUnaryData<WireSendSummary>): SendCall {
  call.on('error', () => {});
  return {
    header: headerOf(call.metadata),
    peer: call.getPeer(),
    accept() {
      call.sendMetadata(new Metadata());
    },
    end(result) {
      if (isFailure(result)) callback(result);
      else callback(null, result);
    },
    listen(on) {
      call.on('data', (b: SendBatch) => on.batch(b));
      call.on('end', () => on.ended());
      call.on('cancelled', () => on.cancelled());
    },
  };
}

/** Whether the HTTP/2 form can serve a call with these headers exactly as grpc-js would (no deadline: peers set none). */
export function servableSend(headers: IncomingHttpHeaders): boolean {
  return headers[h2.HTTP2_HEADER_PATH] === peerService().send.path && headers['grpc-timeout'] === undefined && servable(headers);
}

/** The HTTP/2 form: splits DATA into gRPC messages, decodes each batch, answers with grpc-js's headers and trailers. */
export class H2SendCall implements SendCall {
  private readonly reader: MessageReader;
  private headersSent = false;
  private finished = false;
  private on: Parameters<SendCall['listen']>[0] | undefined;

  constructor(
    private readonly stream: ServerHttp2Stream,
    private readonly headers: IncomingHttpHeaders,
    private readonly maxMessageBytes: number,
  ) {
    stream.on('error', () => undefined); // the 'close' that follows is what matters
    this.reader = new MessageReader(maxMessageBytes);
  }

  header(key: string): string | undefined {
    return first(this.headers[key]);
  }

  get peer(): string {
    const s = this.stream.session?.socket;
    return s ? `${s.remoteAddress ?? '?'}:${s.remotePort ?? '?'}` : 'unknown';
  }

  accept(): void {
    if (this.finished || this.headersSent || this.gone()) return;
    this.headersSent = true;
    this.stream.respond(RESPONSE_HEADERS, { waitForTrailers: true });
  }

  listen(on: Parameters<SendCall['listen']>[0]): void {
    this.on = on;
    this.stream.on('data', (chunk: Buffer) => this.onData(chunk));
    this.stream.once('end', () => {
      if (!this.finished) on.ended();
    });
    this.stream.once('close', () => {
      if (!this.finished) {
        this.finished = true;
        on.cancelled();
      }
    });
  }

  end(result: WireSendSummary | SendFailure): void {
    if (this.finished) return;
    this.finished = true;
    if (this.gone()) return;
    const trailers: Record<string, string> = isFailure(result)
      ? { ...statusTrailers({ code: result.code ?? status.UNKNOWN, details: result.details ?? '' }), ...metadataHeaders(result.metadata) }
      : OK_TRAILERS;
    // Whatever the sender still writes is read and dropped.
    this.stream.resume();
    if (!this.headersSent) {
      this.headersSent = true;
      this.stream.respond({ ...trailers, ...STATUS_AND_TYPE }, { endStream: true });
      return;
    }
    this.stream.once('wantTrailers', () => this.stream.sendTrailers(trailers));
    if (isFailure(result)) this.stream.end();
    else this.stream.end(frameMessages([peerService().send.responseSerialize(result)]));
  }

  private gone(): boolean {
    return this.stream.destroyed || this.stream.closed;
  }

  private onData(chunk: Buffer): void {
    if (this.finished) return;
    // As grpc-js: the compressed flag is ignored when the call's encoding is identity (servableSend).
    const { messages, tooLarge } = this.reader.push(chunk);
    for (const m of messages) {
      let batch: SendBatch;
      try {
        batch = peerService().send.requestDeserialize(m);
      } catch {
        this.end({ code: status.INTERNAL, details: 'Error deserializing request' });
        return;
      }
      this.on?.batch(batch);
      if (this.finished) return;
    }
    if (tooLarge !== undefined) this.end({ code: status.RESOURCE_EXHAUSTED, details: `Received message larger than max (${tooLarge} vs ${this.maxMessageBytes})` });
  }
}

/** Trailing metadata as HTTP/2 trailers (string values only: a refusal's code). */
function metadataHeaders(md: Metadata | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (!md) return out;
  for (const [k, v] of Object.entries(md.getMap())) if (typeof v === 'string') out[k] = v;
  return out;
}
