// The agent's HTTPS port, serving what kubelet's /containerLogs serves:
//   GET /containerLogs/{namespace}/{pod}/{container}?follow&previous&tailLines&sinceSeconds&sinceTime&timestamps&limitBytes
// Trust: the caller must present a client certificate signed by the cluster CA (the one in the agent's
// kubeconfig, or --client-ca-file) in the group system:masters — the API server's kubelet client
// certificate is. The API server in turn does not verify the agent's serving certificate (kube-apiserver's
// default without --kubelet-certificate-authority): the agent's certificate is its own.
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import type { Logger } from 'pino';
import { AgentError } from './agent-error.js';
import type { LogReadOptions } from './log-reader.js';
import type { PodRuntime } from './pod-runtime.js';

export interface LogServerOptions {
  readonly address: string;
  readonly port: number;
  readonly certPem: string;
  readonly keyPem: string;
  /** The CA client certificates must be signed by; without one no request is authorized. */
  readonly clientCaPem?: string;
  readonly runtime: PodRuntime;
  readonly log: Logger;
}

/** Bad query values are 400s with kubelet's shape of message, never a crash. */
class BadRequest extends Error {}

function intParam(q: URLSearchParams, name: string, min: number): number | undefined {
  const v = q.get(name);
  if (v === null || v === '') return undefined;
  const n = Number(v);
  if (!Number.isSafeInteger(n) || n < min) throw new BadRequest(`invalid ${name}: ${v}`);
  return n;
}

function boolParam(q: URLSearchParams, name: string): boolean {
  const v = q.get(name);
  return v !== null && v !== 'false' && v !== '0';
}

/** The query as kubelet's /containerLogs reads it, into the reader's options. */
export function logOptionsFrom(q: URLSearchParams, now = Date.now()): LogReadOptions & { previous: boolean } {
  const tailLines = intParam(q, 'tailLines', 0);
  const sinceSeconds = intParam(q, 'sinceSeconds', 1);
  const limitBytes = intParam(q, 'limitBytes', 1);
  const sinceTime = q.get('sinceTime');
  let sinceMs: number | undefined;
  if (sinceSeconds !== undefined) sinceMs = now - sinceSeconds * 1000;
  if (sinceTime !== null && sinceTime !== '') {
    const t = Date.parse(sinceTime);
    if (Number.isNaN(t)) throw new BadRequest(`invalid sinceTime: ${sinceTime}`);
    sinceMs = t;
  }
  return {
    previous: boolParam(q, 'previous'),
    follow: boolParam(q, 'follow'),
    timestamps: boolParam(q, 'timestamps'),
    ...(tailLines !== undefined ? { tailLines } : {}),
    ...(sinceMs !== undefined ? { sinceMs } : {}),
    ...(limitBytes !== undefined ? { limitBytes } : {}),
  };
}

export class LogServer {
  private server: Server | undefined;
  private readonly streams = new Set<AbortController>();

  constructor(private readonly opts: LogServerOptions) {}

  async start(): Promise<number> {
    const o = this.opts;
    const server = createServer(
      { cert: o.certPem, key: o.keyPem, requestCert: true, rejectUnauthorized: false, ...(o.clientCaPem !== undefined ? { ca: o.clientCaPem } : {}) },
      (req, res) => void this.handle(req, res),
    );
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(o.port, o.address, () => {
        server.off('error', reject);
        resolve();
      });
    });
    return (server.address() as AddressInfo).port;
  }

  async stop(): Promise<void> {
    for (const c of this.streams) c.abort();
    const s = this.server;
    if (!s) return;
    s.closeAllConnections();
    await new Promise<void>((resolve) => s.close(() => resolve()));
  }

  private authorized(req: IncomingMessage): boolean {
    const socket = req.socket as TLSSocket;
    if (this.opts.clientCaPem === undefined || !socket.authorized) return false;
    const cert = socket.getPeerCertificate();
    const orgs = cert.subject?.O;
    const list = orgs === undefined ? [] : Array.isArray(orgs) ? orgs : [orgs];
    return list.includes('system:masters');
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const text = (code: number, body: string): void => {
      if (res.headersSent) {
        res.end();
        return;
      }
      res.writeHead(code, { 'content-type': 'text/plain; charset=utf-8' });
      res.end(body);
    };
    if (!this.authorized(req)) return text(401, 'Unauthorized');
    const url = new URL(req.url ?? '/', 'https://agent');
    const m = /^\/containerLogs\/([^/]+)\/([^/]+)\/([^/]+)\/?$/.exec(url.pathname);
    if (req.method !== 'GET' || !m) return text(404, '404 page not found');
    const [ns, name, container] = [m[1], m[2], m[3]].map((s) => decodeURIComponent(s ?? ''));
    const rt = this.opts.runtime;
    const uid = rt.uids().find((u) => {
      const p = rt.pod(u);
      return p !== undefined && p.metadata.namespace === ns && p.metadata.name === name;
    });
    if (uid === undefined) return text(404, `pod "${name}" in namespace "${ns}" is not on this node`);
    const ac = new AbortController();
    this.streams.add(ac);
    res.on('close', () => ac.abort());
    try {
      const opts = logOptionsFrom(url.searchParams);
      const chunks = rt.logs(uid, container ?? '', { ...opts, signal: ac.signal });
      res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8', 'transfer-encoding': 'chunked' });
      res.flushHeaders();
      for await (const chunk of chunks) {
        if (!res.write(chunk)) await new Promise<void>((resolve) => res.once('drain', resolve).once('close', resolve));
        if (ac.signal.aborted) break;
      }
      res.end();
    } catch (e) {
      if (e instanceof BadRequest) return text(400, e.message);
      if (e instanceof AgentError && e.code === 'AGENT_LOG_NOT_FOUND') return text(400, e.message);
      this.opts.log.warn({ err: e }, 'serving a log failed');
      text(500, (e as Error).message);
    } finally {
      this.streams.delete(ac);
    }
  }
}
