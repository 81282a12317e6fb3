// A GET on a member's client URL — /health, /metrics, /version — with the client certificate when it
// serves TLS. Undefined when nothing answers: for probes, which ask again.
import { readFileSync } from 'node:fs';
import https from 'node:https';
import type { TlsFiles } from './tls-files.js';

export async function httpGet(url: string, tls?: TlsFiles, timeoutMs = 2000): Promise<{ status: number; body: string } | undefined> {
  if (!url.startsWith('https:')) {
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
      return { status: res.status, body: await res.text() };
    } catch {
      return undefined;
    }
  }
  const opts = tls ? { ca: readFileSync(tls.caFile), cert: readFileSync(tls.certFile), key: readFileSync(tls.keyFile) } : {};
  return new Promise((resolve) => {
    const req = https.get(url, { ...opts, timeout: timeoutMs }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.on('error', () => resolve(undefined));
    });
    req.on('error', () => resolve(undefined));
    req.on('timeout', () => req.destroy());
  });
}

/** etcd's /health: {"health":"true"} with 200 once the member has a leader and no alarm. */
export async function healthy(clientUrl: string, tls?: TlsFiles): Promise<boolean> {
  const r = await httpGet(`${clientUrl}/health`, tls);
  return r !== undefined && r.status === 200 && r.body.includes('"true"');
}
