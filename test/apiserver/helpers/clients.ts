// Raw HTTPS clients for the API server tests, one per protocol, so every assertion is about bytes the
// server sent: HTTP/1.1 (no ALPN, a fresh connection per request unless an agent is given) and HTTP/2
// (one session, many streams).
import http2 from 'node:http2';
import https from 'node:https';
import type { KeyPair } from '../../../src/apiserver/pki/certificates.js';

export interface Reply {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
}

export interface RequestSpec {
  readonly method?: string;
  readonly path: string;
  readonly headers?: Record<string, string>;
  readonly body?: string | Buffer;
  /** A client certificate (default: none). */
  readonly cert?: KeyPair;
  readonly token?: string;
}

export function json<T = Record<string, unknown>>(r: Reply): T {
  return JSON.parse(r.body) as T;
}

function authHeaders(spec: RequestSpec): Record<string, string> {
  return { ...(spec.token !== undefined ? { authorization: `Bearer ${spec.token}` } : {}), ...spec.headers };
}

export function h1(port: number, ca: string, spec: RequestSpec): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      {
        host: '127.0.0.1',
        port,
        method: spec.method ?? 'GET',
        path: spec.path,
        ca,
        ...(spec.cert ? { cert: spec.cert.certPem, key: spec.cert.keyPem } : {}),
        agent: false,
        headers: authHeaders(spec),
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(spec.body);
  });
}

export function h2connect(port: number, ca: string, cert?: KeyPair): Promise<http2.ClientHttp2Session> {
  return new Promise((resolve, reject) => {
    const s = http2.connect(`https://127.0.0.1:${port}`, { ca, ...(cert ? { cert: cert.certPem, key: cert.keyPem } : {}) });
    s.once('connect', () => resolve(s));
    s.once('error', reject);
  });
}

export function h2(session: http2.ClientHttp2Session, spec: Omit<RequestSpec, 'cert'>): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const stream = session.request({ ':method': spec.method ?? 'GET', ':path': spec.path, ...authHeaders(spec) });
    let headers: Record<string, string | string[] | undefined> = {};
    const chunks: Buffer[] = [];
    stream.on('response', (h) => (headers = h as Record<string, string | string[] | undefined>));
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('end', () => resolve({ status: Number(headers[':status']), headers, body: Buffer.concat(chunks).toString('utf8') }));
    stream.on('error', reject);
    stream.end(spec.body);
  });
}
