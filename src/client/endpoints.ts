// A client's API servers: one Transport per endpoint and the one in use. Requests stick to that endpoint;
// a connection error there (refused, reset, TLS, no answer in time) moves the set to the next one, logged
// once per switch. A request is sent again on the next endpoint only when that cannot do a second write:
// an idempotent one (GET, a watch), or one whose connection failed before anything was sent. A write that
// may have reached a server is the caller's to judge, as in client-go.
import type { Logger } from 'pino';
import { ClientError } from './api-status-error.js';
import { isConnectionError, Transport, type Protocol, type RawRequest, type RawResponse, type TlsOptions } from './transport.js';

/** Codes of errors that happen before a request is written: no connection, or no TLS session on it. */
const NOT_SENT_CODES = /^(ECONNREFUSED|EHOSTUNREACH|ENETUNREACH|EADDRNOTAVAIL|ENOTFOUND|EAI_AGAIN|ERR_SSL_.*|ERR_TLS_.*|DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT(_LOCALLY)?|CERT_HAS_EXPIRED|CERT_NOT_YET_VALID|CERT_UNTRUSTED)$/;

/**
 * Whether the request cannot have reached a server: the connection (or its TLS or HTTP/2 handshake)
 * failed. A reset or a close after connecting is not: the request may have been read and acted on.
 */
export function neverSent(e: unknown): boolean {
  for (let c: unknown = e, depth = 0; c instanceof Error && depth < 5; c = c.cause, depth++) {
    const code = (c as { code?: unknown }).code;
    if (typeof code === 'string' && NOT_SENT_CODES.test(code)) return true;
    // The HTTP/2 session is made before any stream is opened on it (Transport's `connect <host>: …`).
    if (c instanceof ClientError && c.code === 'CLIENT_TRANSPORT' && /^connect [^ ]+: /.test(c.message) && !c.message.endsWith(': aborted')) return true;
  }
  return false;
}

/** Drops trailing slashes and repeats; the first stays first. */
export function endpointList(server: string, more: readonly string[] = []): string[] {
  const out: string[] = [];
  for (const s of [server, ...more]) {
    const u = s.replace(/\/+$/, '');
    if (u !== '' && !out.includes(u)) out.push(u);
  }
  return out;
}

export interface SendOptions {
  /** GET and watches: sent again on the next endpoint after any connection error. */
  readonly idempotent: boolean;
  /** True when the caller's own deadline (not its signal) ended the attempt: the endpoint did not answer in time. */
  readonly timedOut?: () => boolean;
}

export interface Sent {
  readonly response: RawResponse;
  /** Which endpoint answered (for failed()). */
  readonly endpoint: number;
}

export class Endpoints {
  readonly urls: readonly string[];
  private readonly transports: readonly Transport[];
  private current = 0;

  constructor(
    urls: readonly string[],
    tls: TlsOptions,
    protocol: Protocol,
    private readonly log?: Logger,
  ) {
    if (urls.length === 0) throw new ClientError('CLIENT_CONFIG', 'no API server endpoint');
    this.urls = urls;
    this.transports = urls.map((u) => new Transport(u, tls, protocol));
  }

  /** The endpoint in use. */
  get server(): string {
    return this.urls[this.current] ?? '';
  }

  get count(): number {
    return this.urls.length;
  }

  /**
   * Endpoint `i` failed with `err`: if it is still the one in use, the next one is (logged once; a failure
   * of a request that started before an earlier switch does not switch again).
   */
  failed(i: number, err: unknown): void {
    if (i !== this.current || this.urls.length < 2) return;
    this.current = (i + 1) % this.urls.length;
    this.log?.warn({ from: this.urls[i], to: this.urls[this.current], err: (err as Error)?.message }, 'API server unreachable; switching to the next endpoint');
  }

  async send(req: RawRequest, o: SendOptions): Promise<Sent> {
    for (let tried = 1; ; tried++) {
      const i = this.current;
      const transport = this.transports[i]!;
      try {
        return { response: await transport.send(req), endpoint: i };
      } catch (e) {
        if (o.timedOut?.() === true) {
          this.failed(i, new Error(`${req.method} ${req.path.split('?')[0] ?? ''}: no answer within the request's deadline`));
          throw e;
        }
        if (req.signal.aborted || !isConnectionError(e)) throw e;
        this.failed(i, e);
        if (tried >= this.urls.length || !(o.idempotent || neverSent(e))) throw e;
      }
    }
  }

  close(): void {
    for (const t of this.transports) t.close();
  }
}
