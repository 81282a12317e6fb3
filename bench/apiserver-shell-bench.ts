// The API server shell's own cost per request, before any storage: GETs answered by a handler that
// returns a small object, over HTTP/2 (one connection, many streams, as client-go and kubectl use it)
// and HTTP/1.1 (keep-alive connections), with client certificates. The server runs in a child process so
// the client's work is not counted against it. Prints requests/s and latency percentiles.
//   node dist/bench/apiserver-shell-bench.js [seconds per phase, default 5]
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import http2 from 'node:http2';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { DEFAULT_MAX_REQUEST_BODY_BYTES, startApiServer } from '../src/apiserver/api-server.js';
import { prepareCertDir } from '../src/apiserver/pki/cert-dir.js';
import { issueClientCert, type KeyPair } from '../src/apiserver/pki/certificates.js';
import { servingSans } from '../src/apiserver/pki/serving-sans.js';
import { ResourceRegistry } from '../src/apiserver/resource-registry.js';

const POD = { kind: 'Pod', apiVersion: 'v1', metadata: { name: 'x', namespace: 'default', resourceVersion: '42', uid: '5c1f0a52-0000-4000-8000-000000000000' }, spec: { containers: [{ name: 'c', image: 'nginx' }] } };

async function serve(dir: string): Promise<void> {
  const pki = await prepareCertDir(dir, servingSans({ bindAddress: '127.0.0.1' }));
  const registry = new ResourceRegistry();
  registry.register(
    { group: '', version: 'v1', resource: 'pods', kind: 'Pod', singular: 'pod', shortNames: ['po'], categories: ['all'], namespaced: true, verbs: ['get', 'list'], subresources: [] },
    { serve: async (_req, res) => res.object(200, POD) },
  );
  const server = await startApiServer(
    {
      bindAddress: '127.0.0.1',
      securePort: 0,
      servingCertPem: pki.serving?.certPem ?? '',
      servingKeyPem: pki.serving?.keyPem ?? '',
      clientCaPem: pki.ca.certPem,
      anonymousAuth: true,
      maxRequestsInflight: 0,
      maxMutatingRequestsInflight: 0,
      requestTimeoutMs: 60_000,
      minRequestTimeoutSeconds: 1800,
      maxRequestBodyBytes: DEFAULT_MAX_REQUEST_BODY_BYTES,
      http2MaxStreamsPerConnection: 0,
      etcdHealthcheckTimeoutMs: 2000,
    },
    { registry, storeCheck: async () => {}, log: pino({ level: 'silent' }) },
  );
  // Exit through process.exit so --cpu-prof (BENCH_PROF=1) writes its profile.
  process.on('SIGTERM', () => void server.stop(0).then(() => process.exit(0)));
  process.send?.({ port: server.port });
}

interface Phase {
  readonly name: string;
  readonly done: number;
  readonly seconds: number;
  readonly latenciesMs: number[];
}

function pct(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

async function runPhase(name: string, seconds: number, concurrency: number, one: () => Promise<void>): Promise<Phase> {
  const latenciesMs: number[] = [];
  const end = Date.now() + seconds * 1000;
  const started = process.hrtime.bigint();
  let done = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (Date.now() < end) {
        const t = process.hrtime.bigint();
        await one();
        latenciesMs.push(Number(process.hrtime.bigint() - t) / 1e6);
        done++;
      }
    }),
  );
  return { name, done, seconds: Number(process.hrtime.bigint() - started) / 1e9, latenciesMs };
}

async function main(): Promise<void> {
  if (process.argv[2] === 'serve') {
    await serve(process.argv[3] ?? '');
    return;
  }
  const seconds = Number(process.argv[2] ?? '5');
  const dir = mkdtempSync(join(tmpdir(), 'setpoint-shell-bench-'));
  const child = fork(fileURLToPath(import.meta.url), ['serve', dir], { stdio: 'inherit', execArgv: process.env.BENCH_PROF ? ['--cpu-prof', '--cpu-prof-dir=/tmp/prof'] : [] });
  try {
    const port = await new Promise<number>((resolve) => child.once('message', (m: { port: number }) => resolve(m.port)));
    const pki = await prepareCertDir(dir);
    const admin: KeyPair = await issueClientCert(pki.ca, { user: 'bench', groups: ['system:masters'] });
    const path = '/api/v1/namespaces/default/pods/x';

    const session = http2.connect(`https://127.0.0.1:${port}`, { ca: pki.ca.certPem, cert: admin.certPem, key: admin.keyPem });
    const h2get = (): Promise<void> =>
      new Promise((resolve, reject) => {
        const s = session.request({ ':path': path });
        s.on('data', () => {});
        s.on('end', () => resolve());
        s.on('error', reject);
        s.end();
      });
    const agent = new https.Agent({ keepAlive: true, maxSockets: 16, ca: pki.ca.certPem, cert: admin.certPem, key: admin.keyPem });
    const h1get = (): Promise<void> =>
      new Promise((resolve, reject) => {
        const req = https.get({ host: '127.0.0.1', port, path, agent }, (res) => {
          res.on('data', () => {});
          res.on('end', () => resolve());
        });
        req.on('error', reject);
      });
    // Warm up both paths (TLS sessions, JIT) before measuring.
    await runPhase('warm-up', 1, 8, h2get);
    await runPhase('warm-up', 1, 8, h1get);
    const phases = [
      await runPhase('HTTP/2, 1 connection, 1 in flight', seconds, 1, h2get),
      await runPhase('HTTP/2, 1 connection, 64 in flight', seconds, 64, h2get),
      await runPhase('HTTP/1.1, 16 keep-alive connections', seconds, 16, h1get),
    ];
    session.close();
    agent.destroy();
    console.log(`API server shell: GET of one pod through the full pipeline (TLS, client certificate, RequestInfo, routing, handler), ${seconds} s per phase`);
    console.log('| phase | requests/s | p50 ms | p99 ms |');
    console.log('|--|--:|--:|--:|');
    for (const p of phases) {
      const sorted = [...p.latenciesMs].sort((a, b) => a - b);
      console.log(`| ${p.name} | ${Math.round(p.done / p.seconds).toLocaleString('en-US')} | ${pct(sorted, 50).toFixed(2)} | ${pct(sorted, 99).toFixed(2)} |`);
    }
  } finally {
    child.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
