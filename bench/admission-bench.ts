// What admission costs one pod create, in process and without the store: the default chain's plugins
// alone (reads served by an in-memory seam, as the watch caches serve them), then with one validating
// webhook that allows, then with one mutating webhook that patches, both real HTTPS servers in this process
// (keep-alive connections). Sequential requests after a short warm-up; prints p50/p99 latency and calls/s per case.
//   node dist/bench/admission-bench.js [iterations per case, default 2000]
import { pino } from 'pino';
import { defaultAdmissionChain, type AdmissionReads } from '../src/apiserver/admission/default-admission.js';
import type { AdmissionAttributes, AdmissionRecord } from '../src/apiserver/admission/interface.js';
import { authenticatedUser } from '../src/apiserver/authn/user-info.js';
import type { StoredObject } from '../src/apiserver/storage/interface.js';
import { startWebhookServer } from '../src/harness/webhook-server.js';

const N = Number(process.argv[2] ?? 2000);
const log = pino({ level: 'silent' });

function pod(i: number): StoredObject {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name: `p${i}`, namespace: 'bench', labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } };
}

function reads(configs: Record<string, StoredObject[]>): AdmissionReads {
  const ns: StoredObject = { metadata: { name: 'bench', labels: { team: 'a' } }, status: { phase: 'Active' } };
  return {
    cachedList: (group, resource) => Promise.resolve(configs[`${group}/${resource}`] ?? []),
    get: (_g, resource, name) => Promise.resolve(resource === 'namespaces' && name === 'bench' ? ns : undefined),
  };
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

async function run(name: string, configs: Record<string, StoredObject[]>): Promise<string> {
  const chain = defaultAdmissionChain(reads(configs), {}, log);
  const user = authenticatedUser('admin', '', ['system:masters']);
  const times: number[] = [];
  const warmup = Math.min(200, Math.floor(N / 10));
  let t0 = performance.now();
  for (let i = -warmup; i < N; i++) {
    if (i === 0) t0 = performance.now();
    const attrs: AdmissionAttributes = {
      operation: 'CREATE',
      resource: { group: '', version: 'v1', resource: 'pods' },
      subresource: '',
      kind: { group: '', version: 'v1', kind: 'Pod' },
      namespace: 'bench',
      name: `p${i}`,
      object: pod(i),
      dryRun: false,
      user,
      signal: new AbortController().signal,
    };
    const records: AdmissionRecord[] = [];
    const s = performance.now();
    const admitted = await chain.admit(attrs, records);
    await chain.validate({ ...attrs, ...(admitted ? { object: admitted } : {}) }, records);
    if (i >= 0) times.push(performance.now() - s);
  }
  const total = (performance.now() - t0) / 1000;
  chain.close();
  times.sort((a, b) => a - b);
  return `| ${name.padEnd(44)} | ${percentile(times, 50).toFixed(3).padStart(8)} | ${percentile(times, 99).toFixed(3).padStart(8)} | ${Math.round(N / total).toString().padStart(8)} |`;
}

async function main(): Promise<void> {
  const hooks = await startWebhookServer();
  const webhook = (path: string): Record<string, unknown> => ({
    name: `${path.slice(1)}.bench`,
    clientConfig: { url: hooks.url(path), caBundle: hooks.caBundle },
    rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'], scope: '*' }],
    namespaceSelector: { matchLabels: { team: 'a' } },
    objectSelector: {},
    failurePolicy: 'Fail',
    sideEffects: 'None',
    timeoutSeconds: 10,
    admissionReviewVersions: ['v1'],
  });
  const config = (kind: string, path: string): StoredObject => ({ apiVersion: 'admissionregistration.k8s.io/v1', kind, metadata: { name: path, resourceVersion: '1' }, webhooks: [webhook(path)] });
  const rows = [
    await run('plugins only (4 built-in, no webhooks)', {}),
    await run('+ 1 validating webhook (allow)', { 'admissionregistration.k8s.io/validatingwebhookconfigurations': [config('ValidatingWebhookConfiguration', '/allow')] }),
    await run('+ 1 mutating webhook (JSON patch)', { 'admissionregistration.k8s.io/mutatingwebhookconfigurations': [config('MutatingWebhookConfiguration', '/patch')] }),
  ];
  await hooks.stop();
  console.log(`admission per pod create, ${N} sequential calls per case (node ${process.version})`);
  console.log(`| ${'case'.padEnd(44)} | p50 (ms) | p99 (ms) | calls/s  |`);
  console.log(`|${'-'.repeat(46)}|----------|----------|----------|`);
  for (const r of rows) console.log(r);
}

await main();
