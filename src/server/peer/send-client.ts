// The outbound Raft message stream (Peer.Send) as a member dials it: one gRPC client-streaming call on
// its own HTTP/2 connection, written straight onto Node's HTTP/2 stream. Through grpc-js each batch went
// through a serializer, a filter stack of promises (compression, retries, resolution, load balancing)
// and a subchannel call before reaching the stream: under `etcdctl check perf --load=l` that was 5–7 %
// of a member's busy main thread and about 1 KB of garbage per write on the leader. The wire does not
// change: grpc-js's request headers, length-prefixed messages, its keepalive PINGs, and the status read
// from the response's trailers, so the peer server (either of its forms) cannot tell the difference.
// peer/send-call.ts is the receiving end.
import { Metadata, status } from '@grpc/grpc-js';
import type { ServiceError } from '@grpc/grpc-js';
import http2 from 'node:http2';
import type { ClientHttp2Session, ClientHttp2Stream, IncomingHttpHeaders, OutgoingHttpHeaders, SecureClientSessionOptions } from 'node:http2';
import { isIP } from 'node:net';
import type { Message, NodeId } from '../../raft/types.js';
import type { PeerTimings } from './channel.js';
import type { PeerTls, PeerUrl } from './credentials.js';
import { callMetadata, MAX_GRPC_MESSAGE_BYTES, peerService } from './proto.js';
import { encodeMessageBatch } from './wire.js';

/** How a Send call ended: null when the peer closed it with OK, else a gRPC status with its trailers. */
export type SendCallEnd = Partial<ServiceError> | null;

/** One outbound Send call. */
export interface SendStreamCall {
  /** Writes one batch; `done` runs once HTTP/2 has taken it (a shut flow-control window holds it back). */
  write(messages: readonly Message[], done: () => void): void;
  /** Ends the call and closes its connection; no event follows. */
  cancel(): void;
}

export interface SendStreamEvents {
  /** The peer sent response headers: it checked who we are and accepted the stream. */
  accepted(): void;
  /** The call is over (once, never after cancel). */
  ended(end: SendCallEnd): void;
}

export interface SendStreamTarget {
  readonly url: PeerUrl;
  readonly tls: PeerTls | undefined;
  readonly timings: PeerTimings;
  readonly from: NodeId;
  readonly to: NodeId;
  readonly clusterId: string;
}

/** Opens the call; the connection and the call start at once, as a fresh grpc-js channel's would. */
export function openSendStream(target: SendStreamTarget, on: SendStreamEvents): SendStreamCall {
  return new H2ClientSendCall(target, on);
}

/** grpc-js's identifying headers, so logs and the peer server see the same client as before. */
const USER_AGENT = 'grpc-node-js setpoint-peer';

function connectOptions(url: PeerUrl, tls: PeerTls | undefined): SecureClientSessionOptions {
  if (!url.secure) return {};
  // grpc-js's createSsl(ca, key, cert): the peer's certificate must chain to ca (or the system roots
  // without one) and name the host dialled; ours is presented as a client certificate.
  return {
    ALPNProtocols: ['h2'],
    ...(tls?.ca ? { ca: tls.ca } : {}),
    ...(tls ? { cert: tls.cert, key: tls.key } : {}),
    ...(isIP(url.hostname) === 0 ? { servername: url.hostname } : {}),
  };
}

class H2ClientSendCall implements SendStreamCall {
  private readonly session: ClientHttp2Session;
  private readonly stream: ClientHttp2Stream;
  private keepalive: NodeJS.Timeout | undefined;
  private pingTimer: NodeJS.Timeout | undefined;
  private over = false;

  constructor(
    private readonly t: SendStreamTarget,
    private readonly on: SendStreamEvents,
  ) {
    const { url } = t;
    this.session = http2.connect(`${url.secure ? 'https' : 'http'}://${url.target}`, connectOptions(url, t.tls));
    this.session.on('error', (err) => this.finish(unavailable(err.message)));
    this.session.on('goaway', () => undefined); // the stream's close that follows says how it ended
    this.session.on('close', () => this.finish(unavailable('connection closed')));
    const headers: OutgoingHttpHeaders = {
      [http2.constants.HTTP2_HEADER_METHOD]: 'POST',
      [http2.constants.HTTP2_HEADER_PATH]: peerService().send.path,
      [http2.constants.HTTP2_HEADER_CONTENT_TYPE]: 'application/grpc',
      [http2.constants.HTTP2_HEADER_TE]: 'trailers',
      [http2.constants.HTTP2_HEADER_USER_AGENT]: USER_AGENT,
      'grpc-accept-encoding': 'identity',
      // Who we are, for the peer's admission check: the same metadata the unary peer calls carry.
      ...callMetadata(t.from, t.to, t.clusterId).toHttp2Headers(),
    };
    this.stream = this.session.request(headers);
    this.stream.on('error', () => undefined); // 'close' follows and says how the call ended
    this.stream.on('response', (h: IncomingHttpHeaders, flags: number) => {
      // Trailers-only: a refusal, or any failure before the call began. The call is over as soon as
      // the status is in, as in grpc-js: our side of the stream is still open, so no 'close' comes.
      if (h['grpc-status'] !== undefined || (flags & http2.constants.NGHTTP2_FLAG_END_STREAM) !== 0) this.finish(statusOf(h));
      else if (!this.over) this.on.accepted();
    });
    this.stream.on('trailers', (h: IncomingHttpHeaders) => this.finish(statusOf(h)));
    this.stream.on('data', () => undefined); // the summary: nothing in it is used
    this.stream.on('close', () => {
      const code = this.stream.rstCode;
      this.finish(unavailable(`stream closed${code ? ` with RST_STREAM code ${code}` : ''}`));
    });
    this.startKeepalive();
  }

  write(messages: readonly Message[], done: () => void): void {
    if (this.over) return;
    const framed = encodeMessageBatch(messages, 5);
    const length = framed.length - 5;
    if (length > MAX_GRPC_MESSAGE_BYTES) {
      // As grpc-js's max_send_message_length: the call fails rather than send it.
      this.finish({ code: status.RESOURCE_EXHAUSTED, details: `Sent message larger than max (${length} vs. ${MAX_GRPC_MESSAGE_BYTES})` });
      return;
    }
    framed[0] = 0;
    framed.writeUInt32BE(length, 1);
    this.stream.write(framed, () => done());
  }

  cancel(): void {
    this.over = true;
    this.close();
  }

  /** grpc-js's keepalive: a PING every keepaliveTimeMs; no ACK within keepaliveTimeoutMs ends the connection. */
  private startKeepalive(): void {
    const { keepaliveTimeMs, keepaliveTimeoutMs } = this.t.timings;
    this.keepalive = setInterval(() => {
      if (this.pingTimer || this.over || this.session.destroyed) return;
      const sent = this.session.ping((err) => {
        if (err) return; // the session is going: its close ends the call
        if (this.pingTimer) clearTimeout(this.pingTimer);
        this.pingTimer = undefined;
      });
      if (!sent) return;
      this.pingTimer = setTimeout(() => this.finish(unavailable('keepalive ping not acknowledged')), keepaliveTimeoutMs);
      this.pingTimer.unref();
    }, keepaliveTimeMs);
    this.keepalive.unref();
  }

  private finish(end: SendCallEnd): void {
    if (this.over) return;
    this.over = true;
    this.close();
    this.on.ended(end);
  }

  private close(): void {
    if (this.keepalive) clearInterval(this.keepalive);
    if (this.pingTimer) clearTimeout(this.pingTimer);
    this.keepalive = undefined;
    this.pingTimer = undefined;
    if (!this.stream.destroyed) this.stream.close(http2.constants.NGHTTP2_CANCEL);
    if (!this.session.destroyed) this.session.destroy();
  }
}

function unavailable(details: string): SendCallEnd {
  return { code: status.UNAVAILABLE, details, message: `${status.UNAVAILABLE} UNAVAILABLE: ${details}` };
}

/** A call's status from its trailers: null for OK, else the code, message and trailing metadata. */
function statusOf(h: IncomingHttpHeaders): SendCallEnd {
  const raw = h['grpc-status'];
  const code = raw === undefined ? status.UNKNOWN : Number(raw);
  if (code === status.OK) return null;
  const m = h['grpc-message'];
  let details = typeof m === 'string' ? m : '';
  try {
    details = decodeURIComponent(details);
  } catch {
    // not percent-encoded after all: as sent
  }
  return { code, details, message: `${code} ${status[code] ?? 'UNKNOWN'}: ${details}`, metadata: Metadata.fromHttp2Headers(h) };
}
