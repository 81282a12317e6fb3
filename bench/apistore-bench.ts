// LIST of 10,000 objects through the API server's storage, on a real etcd 3.4 and a real Setpoint store in
// one run: from the watch cache ("0"), consistent from the cache (caught up; and after a write elsewhere
// moved the store's revision, so the cache compares keys with the store), with a selector, and straight
// from the store. Prints one table. Run after `npm run build`: node --expose-gc dist/bench/apistore-bench.js
// (BENCH_OBJECTS, BENCH_RUNS, BENCH_MEMBERS to change the defaults: 10000, 20, 1).
import { cpus, loadavg } from 'node:os';
import { Cacher } from '../src/apiserver/storage/cacher/cacher.js';
import { EtcdStorage } from '../src/apiserver/storage/etcd3/etcd-storage.js';
import type { Predicate, StoredObject } from '../src/apiserver/storage/interface.js';
import { EtcdClient } from '../src/etcd-client/etcd-client.js';
import { StoreCluster } from '../src/harness/store-cluster.js';

const STORE_KINDS = ['etcd', 'setpoint'] as const;

const OBJECTS = Number(process.env.BENCH_OBJECTS ?? 10_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 20);
const MEMBERS = Number(process.env.BENCH_MEMBERS ?? 1);
const PREFIX = '/registry/pods/';

/** A pod of about 1 KiB of JSON, in one of ten namespaces, one in ten labelled tier=web. */
function pod(i: number): StoredObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: `pod-${i}`, namespace: `ns-${i % 10}`, uid: `00000000-0000-0000-0000-${String(i).padStart(12, '0')}`, labels: { app: `app-${i % 100}`, tier: i % 10 === 0 ? 'web' : 'db' }, creationTimestamp: '2025-01-01T00:00:00Z' },
    spec: {
      nodeName: `node-${i % 50}`,
      restartPolicy: 'Always',
      containers: [{ name: 'main', image: 'registry.example/app:1.0', args: ['--port=8080', '--verbose'], ports: [{ containerPort: 8080, protocol: 'TCP' }], resources: { requests: { cpu: '100m', memory: '128Mi' } }, env: [{ name: 'MODE', value: 'production' }] }],
    },
    status: { phase: 'Running', podIP: `10.0.${(i >> 8) & 255}.${i & 255}`, conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: '2025-01-01T00:00:00Z' }] },
  };
}

const web: Predicate = { empty: false, matches: (o) => (o.metadata['labels'] as Record<string, string> | undefined)?.['tier'] === 'web' };

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
}

/** `before` runs ahead of each timed call, untimed. */
async function measure(run: () => Promise<unknown>, before?: () => Promise<unknown>): Promise<{ p50: number; p99: number; max: number }> {
  for (let i = 0; i < 3; i++) await run();
  const ms: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    await before?.();
    const t0 = performance.now();
    await run();
    ms.push(performance.now() - t0);
  }
  ms.sort((a, b) => a - b);
  return { p50: quantile(ms, 0.5), p99: quantile(ms, 0.99), max: ms.at(-1) ?? NaN };
}

function heapMiB(): number {
  (globalThis as { gc?: () => void }).gc?.();
  return process.memoryUsage().heapUsed / 2 ** 20;
}

interface Row {
  readonly store: string;
  readonly what: string;
  readonly items: number;
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
}

async function benchStore(kind: (typeof STORE_KINDS)[number]): Promise<{ rows: Row[]; createsPerSec: number; cacheMiB: number }> {
  const cluster = await StoreCluster.start({ program: kind, size: MEMBERS, label: 'apistore-bench-' });
  const clients: EtcdClient[] = [];
  const newClient = (): EtcdClient => {
    const c = new EtcdClient({ endpoints: cluster.endpoints(), callTimeoutMs: 15_000 });
    clients.push(c);
    return c;
  };
  try {
    const client = newClient();
    const storage = new EtcdStorage({ client });
    const t0 = performance.now();
    let next = 0;
    await Promise.all(Array.from({ length: 32 }, async () => {
      for (let i = next++; i < OBJECTS; i = next++) await storage.create(`${PREFIX}ns-${i % 10}/pod-${i}`, pod(i));
    }));
    const createsPerSec = OBJECTS / ((performance.now() - t0) / 1000);
    const before = heapMiB();
    const cacher = new Cacher({ storage: new EtcdStorage({ client: newClient() }), resourcePrefix: PREFIX });
    await cacher.whenReady();
    const cacheMiB = heapMiB() - before;
    const rows: Row[] = [];
    const add = async (what: string, run: () => Promise<{ items: unknown[] }>, before?: () => Promise<unknown>): Promise<void> => {
      const items = (await run()).items.length;
      rows.push({ store: kind, what, items, ...(await measure(run, before)) });
    };
    await add('cache, resourceVersion=0', () => cacher.list(PREFIX, { resourceVersion: '0' }));
    await add('cache, consistent (caught up)', () => cacher.list(PREFIX));
    let n = 0;
    // A write elsewhere before each (untimed): the store's revision is past the cache's, as in a busy cluster.
    const elsewhere = (): Promise<unknown> => client.put('/bench/elsewhere', String(n++));
    await add('cache, consistent (store moved: checked with the store)', () => cacher.list(PREFIX), elsewhere);
    await add('cache, consistent, tier=web (store moved)', () => cacher.list(PREFIX, { predicate: web }), elsewhere);
    await add('cache, consistent, one namespace (store moved)', () => cacher.list(`${PREFIX}ns-3/`), elsewhere);
    await add('store, consistent', () => storage.list(PREFIX));
    await add('store, consistent, limit=500 (first page)', () => storage.list(PREFIX, { limit: 500 }));
    const st = cacher.stats();
    if (st.consistentFallbacks > 0) console.log(`${kind}: ${st.consistentFallbacks} consistent lists fell back to the store`);
    await cacher.close();
    return { rows, createsPerSec, cacheMiB };
  } finally {
    for (const c of clients) c.close();
    await cluster.destroy();
  }
}

async function main(): Promise<void> {
  console.log(`apistore bench: ${OBJECTS} pods of ~1 KiB, ${RUNS} runs after 3 warm-ups, ${MEMBERS} member(s), ${cpus().length} cores, load ${loadavg()[0]?.toFixed(2)}`);
  const rows: Row[] = [];
  const extra: string[] = [];
  for (const kind of STORE_KINDS) {
    const r = await benchStore(kind);
    rows.push(...r.rows);
    extra.push(`${kind}: ${OBJECTS} creates at ${r.createsPerSec.toFixed(0)}/s (32 concurrent); cache heap for the resource ~${r.cacheMiB.toFixed(0)} MiB`);
  }
  console.log('\n| store | list | items | p50 ms | p99 ms | max ms |');
  console.log('|---|---|---:|---:|---:|---:|');
  for (const r of rows) console.log(`| ${r.store} | ${r.what} | ${r.items} | ${r.p50.toFixed(1)} | ${r.p99.toFixed(1)} | ${r.max.toFixed(1)} |`);
  console.log('');
  for (const e of extra) console.log(e);
  process.exit(0);
}

void main();
