// The loops' recorder against a real API server: a repeated report is not a write per loop (one on change,
// then one per interval carrying how many reconciles it stands for), one write in flight per object and
// writes spaced, the latest report sent next, and a vanished object costs nothing but a dropped record.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/client/manual-clock.js';
import { ReconcileRecorder, type LoopReport } from '../../src/client/reconcile-recorder.js';
import { CONFIGMAPS } from '../../src/client/resource-types.js';
import { RestClient } from '../../src/client/rest-client.js';
import { startRegistryServer, type RegistryServer } from '../apiserver/registry/registry-server.js';
import { testLog } from '../apiserver/helpers/test-server.js';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const report = (actual: number, outcome: LoopReport['outcome'] = 'waiting'): LoopReport => ({ gap: { desired: { replicas: 3 }, actual: { replicas: actual } }, action: 'wait', outcome });

describe('ReconcileRecorder', () => {
  let s: RegistryServer;
  let rest: RestClient;
  beforeAll(async () => {
    s = await startRegistryServer('etcd');
    rest = new RestClient({ server: s.ts.url, tls: { ca: s.ts.ca.certPem, cert: s.ts.admin.certPem, key: s.ts.admin.keyPem } });
  });
  afterAll(async () => {
    rest?.close();
    await s?.stop();
  });

  async function stored(ns: string, name: string): Promise<Obj[]> {
    return (await rest.request<Obj>({ path: `/api/v1/namespaces/${ns}/configmaps/${name}/reconcile` })).items as Obj[];
  }

  it('writes on change, and a repeated report at most once per interval with its count', async () => {
    const ns = await s.namespace();
    expect((await s.call('POST', `/api/v1/namespaces/${ns}/configmaps`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' } })).status).toBe(201);
    const clock = new ManualClock();
    const r = new ReconcileRecorder({ rest, controller: 'test-controller', clock, log: testLog, minIntervalMs: 10_000 });
    for (let i = 0; i < 5; i++) {
      r.record(CONFIGMAPS, ns, 'c', report(1));
      await r.idle();
    }
    expect(r.written).toBe(1);
    expect(await stored(ns, 'c')).toMatchObject([{ controller: 'test-controller', count: 1, outcome: 'waiting' }]);
    clock.advance(10_000);
    r.record(CONFIGMAPS, ns, 'c', report(1));
    await r.idle();
    expect(r.written).toBe(2);
    // The four reconciles not written before and this one.
    expect(await stored(ns, 'c')).toMatchObject([{ count: 6 }]);
    clock.advance(1_000);
    r.record(CONFIGMAPS, ns, 'c', report(2));
    await r.idle();
    expect(r.written).toBe(3);
    expect(await stored(ns, 'c')).toMatchObject([{ count: 7, gap: { actual: { replicas: 2 } } }]);
    r.record(CONFIGMAPS, ns, 'c', report(3, 'ok'));
    // Within the spacing since the last write: held, then written when it ends.
    await r.idle();
    expect(r.written).toBe(3);
    clock.advance(1_000);
    await r.idle();
    expect(r.written).toBe(4);
    const [done] = await stored(ns, 'c');
    expect(done).toMatchObject({ outcome: 'ok', count: 1 });
    expect(done?.since).toBe(done?.lastTime);
  });

  it('keeps one write in flight per object and sends the latest report next', async () => {
    const ns = await s.namespace();
    expect((await s.call('POST', `/api/v1/namespaces/${ns}/configmaps`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'f' } })).status).toBe(201);
    const clock = new ManualClock();
    const r = new ReconcileRecorder({ rest, controller: 'test-controller', clock, log: testLog });
    for (let i = 0; i < 10; i++) r.record(CONFIGMAPS, ns, 'f', report(i));
    await r.idle();
    expect(r.written).toBe(1);
    clock.advance(1_000);
    await r.idle();
    expect(r.written).toBe(2);
    expect(await stored(ns, 'f')).toMatchObject([{ gap: { actual: { replicas: 9 } }, count: 10 }]);
  });

  it('drops the record of an object that does not exist, and writes again once it does', async () => {
    const ns = await s.namespace();
    const clock = new ManualClock();
    const r = new ReconcileRecorder({ rest, controller: 'test-controller', clock, log: testLog });
    r.record(CONFIGMAPS, ns, 'late', report(0));
    await r.idle();
    expect(r.written).toBe(1);
    expect((await s.call('GET', `/api/v1/namespaces/${ns}/configmaps/late/reconcile`)).status).toBe(404);
    expect((await s.call('POST', `/api/v1/namespaces/${ns}/configmaps`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'late' } })).status).toBe(201);
    // The failed write is not taken for the last one: the same report goes out again.
    r.record(CONFIGMAPS, ns, 'late', report(0));
    clock.advance(1_000);
    await r.idle();
    expect(r.written).toBe(2);
    expect(await stored(ns, 'late')).toHaveLength(1);
  });
});
