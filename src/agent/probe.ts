// One probe attempt, as kubelet's prober makes it: exec (exit 0 succeeds), httpGet (a status from 200 to
// 399 succeeds; HTTPS does not verify the certificate), tcpSocket (a connection succeeds). Failures carry
// kubelet's messages, which end up in Unhealthy events.
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { connect } from 'node:net';
import { execCommand } from './exec-command.js';
import type { Container, Probe } from './pod-types.js';

export interface ProbeOutcome {
  readonly ok: boolean;
  readonly message: string;
}

export interface ProbeTarget {
  readonly podIP: string;
  readonly container: Container;
  readonly env: Record<string, string>;
  readonly cwd: string;
}

/** Kubernetes' defaults for the fields a probe leaves out. */
export function probeTiming(p: Probe): { initialDelayMs: number; periodMs: number; timeoutMs: number; successThreshold: number; failureThreshold: number } {
  return {
    initialDelayMs: (p.initialDelaySeconds ?? 0) * 1000,
    periodMs: Math.max(1, p.periodSeconds ?? 10) * 1000,
    timeoutMs: Math.max(1, p.timeoutSeconds ?? 1) * 1000,
    successThreshold: Math.max(1, p.successThreshold ?? 1),
    failureThreshold: Math.max(1, p.failureThreshold ?? 3),
  };
}

function resolvePort(port: number | string, c: Container): number | undefined {
  if (typeof port === 'number') return port;
  if (/^\d+$/.test(port)) return Number(port);
  return c.ports?.find((p) => p.name === port)?.containerPort;
}

function httpProbe(url: URL, headers: Record<string, string>, timeoutMs: number): Promise<ProbeOutcome> {
  return new Promise((resolve) => {
    const req = (url.protocol === 'https:' ? httpsRequest : httpRequest)(
      url,
      { method: 'GET', headers: { 'User-Agent': 'kube-probe/1.32', Accept: '*/*', ...headers }, timeout: timeoutMs, rejectUnauthorized: false },
      (res) => {
        res.resume();
        const code = res.statusCode ?? 0;
        if (code >= 200 && code < 400) resolve({ ok: true, message: '' });
        else resolve({ ok: false, message: `HTTP probe failed with statuscode: ${code}` });
      },
    );
    req.on('timeout', () => {
      req.destroy();
      resolve({ ok: false, message: `Get "${url.href}": context deadline exceeded (Client.Timeout exceeded while awaiting headers)` });
    });
    req.on('error', (err: NodeJS.ErrnoException) => {
      const why = err.code === 'ECONNREFUSED' ? 'connect: connection refused' : err.message;
      resolve({ ok: false, message: `Get "${url.href}": dial tcp ${url.host}: ${why}` });
    });
    req.end();
  });
}

function tcpProbe(host: string, port: number, timeoutMs: number): Promise<ProbeOutcome> {
  return new Promise((resolve) => {
    const s = connect({ host, port });
    const timer = setTimeout(() => {
      s.destroy();
      resolve({ ok: false, message: `dial tcp ${host}:${port}: i/o timeout` });
    }, timeoutMs);
    s.on('connect', () => {
      clearTimeout(timer);
      s.destroy();
      resolve({ ok: true, message: '' });
    });
    s.on('error', (err: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      const why = err.code === 'ECONNREFUSED' ? 'connect: connection refused' : err.message;
      resolve({ ok: false, message: `dial tcp ${host}:${port}: ${why}` });
    });
  });
}

export async function runProbe(p: Probe, t: ProbeTarget): Promise<ProbeOutcome> {
  const { timeoutMs } = probeTiming(p);
  if (p.exec) {
    const argv = p.exec.command ?? [];
    const r = await execCommand(argv, t.env, t.cwd, timeoutMs);
    if (r.timedOut) return { ok: false, message: `command ${JSON.stringify(argv.join(' '))} timed out` };
    if (r.error) return { ok: false, message: r.error };
    return r.exitCode === 0 ? { ok: true, message: r.output } : { ok: false, message: r.output };
  }
  if (p.httpGet) {
    const port = resolvePort(p.httpGet.port, t.container);
    if (port === undefined) return { ok: false, message: `unable to find port ${String(p.httpGet.port)}` };
    const scheme = (p.httpGet.scheme ?? 'HTTP').toLowerCase();
    const host = p.httpGet.host ?? t.podIP;
    let path = p.httpGet.path ?? '/';
    if (!path.startsWith('/')) path = `/${path}`;
    let url: URL;
    try {
      url = new URL(`${scheme}://${host}:${port}${path}`);
    } catch {
      return { ok: false, message: `invalid probe URL for host ${host} path ${path}` };
    }
    const headers: Record<string, string> = {};
    for (const h of p.httpGet.httpHeaders ?? []) headers[h.name] = h.value;
    return httpProbe(url, headers, timeoutMs);
  }
  if (p.tcpSocket) {
    const port = resolvePort(p.tcpSocket.port, t.container);
    if (port === undefined) return { ok: false, message: `unable to find port ${String(p.tcpSocket.port)}` };
    return tcpProbe(p.tcpSocket.host ?? t.podIP, port, timeoutMs);
  }
  return { ok: false, message: 'probe has no handler' };
}
