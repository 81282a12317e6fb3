// Whether the store answers, until the storage layer's etcd client provides the check (a quorum read
// over the v3 API): etcd's /health on a client URL, which etcd 3.4 and Setpoint's store both serve and
// answer with a linearizable read behind it. Any member saying {"health":"true"} is enough.
import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';

export interface EtcdClientTls {
  readonly caFile?: string;
  readonly certFile?: string;
  readonly keyFile?: string;
}

function probe(url: string, tls: { ca?: Buffer; cert?: Buffer; key?: Buffer }, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const target = new URL('/health', url);
    const lib = target.protocol === 'https:' ? https : http;
    const req = lib.get(target, { timeout: timeoutMs, ...(target.protocol === 'https:' ? tls : {}) }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        if (body.length < 4096) body += c;
      });
      res.on('end', () => {
        try {
          if (res.statusCode === 200 && (JSON.parse(body) as { health?: unknown }).health === 'true') resolve();
          else reject(new Error(`${url}: ${res.statusCode ?? 0} ${body.trim()}`));
        } catch {
          reject(new Error(`${url}: ${res.statusCode ?? 0} ${body.trim()}`));
        }
      });
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`${url}: no answer in ${timeoutMs} ms`)));
    req.on('error', reject);
  });
}

/** A store check over `servers` (their TLS files read once, here). */
export function etcdHealthCheck(servers: readonly string[], tls: EtcdClientTls, timeoutMs: number): () => Promise<void> {
  const material = {
    ...(tls.caFile ? { ca: readFileSync(tls.caFile) } : {}),
    ...(tls.certFile ? { cert: readFileSync(tls.certFile) } : {}),
    ...(tls.keyFile ? { key: readFileSync(tls.keyFile) } : {}),
  };
  return async () => {
    const errors: string[] = [];
    const results = servers.map((s) => probe(s, material, timeoutMs));
    // The first healthy answer wins; all failing is a failure with every reason.
    await new Promise<void>((resolve, reject) => {
      let pending = results.length;
      for (const r of results) {
        r.then(resolve, (e: Error) => {
          errors.push(e.message);
          if (--pending === 0) reject(new Error(errors.join('; ')));
        });
      }
    });
  };
}
