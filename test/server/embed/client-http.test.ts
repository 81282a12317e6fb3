// HTTP/1.1 on the client port, next to gRPC: /health, /version and /metrics answered as etcd 3.4 answers
// them (status, headers, body — compared with a real etcd), unhealthy without a leader, and the metrics
// etcd's dashboards read.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFixturePort } from '../helpers/client-port-harness.js';
import type { FixturePort } from '../helpers/client-port-harness.js';
import { startReferenceEtcd } from '../helpers/etcd-reference.js';
import type { ReferenceEtcd } from '../helpers/etcd-reference.js';
import { EtcdGrpcClient, bytes } from '../helpers/grpc-client.js';

interface Answer {
  readonly status: number;
  readonly body: string;
  readonly headers: Record<string, string>;
}

/** The headers both servers must agree on (Date and Content-Length legitimately vary). */
const COMPARED = ['content-type', 'allow', 'x-content-type-options', 'access-control-allow-origin', 'access-control-allow-methods', 'access-control-allow-headers'];

async function ask(url: string, method = 'GET'): Promise<Answer> {
  const res = await fetch(url, { method });
  const headers: Record<string, string> = {};
  for (const h of COMPARED) {
    const v = res.headers.get(h);
    if (v !== null) headers[h] = v;
  }
  return { status: res.status, body: await res.text(), headers };
}

describe('client port: HTTP', () => {
  let fx: FixturePort | undefined;
  let ref: ReferenceEtcd | undefined;

  beforeAll(async () => {
    [fx, ref] = await Promise.all([startFixturePort({ setpointVersion: '0.1.0' }), startReferenceEtcd()]);
  });

  afterAll(async () => {
    await Promise.all([fx?.close(), ref?.stop()]);
  });

  it('answers /health, errors and unknown paths exactly as etcd does', async () => {
    for (const [path, method] of [
      ['/health', 'GET'],
      ['/health', 'POST'],
      ['/version', 'POST'],
      ['/health?serializable=true', 'GET'],
      ['/nope', 'GET'],
    ] as const) {
      const mine = await ask(`${fx?.endpoint}${path}`, method);
      const theirs = await ask(`${ref?.endpoint}${path}`, method);
      expect({ path, method, ...mine }).toEqual({ path, method, ...theirs });
    }
  });

  it('answers /version with etcd versions plus ours', async () => {
    const mine = await ask(`${fx?.endpoint}/version`);
    const theirs = await ask(`${ref?.endpoint}/version`);
    expect(mine.status).toBe(200);
    expect(mine.headers).toEqual(theirs.headers);
    expect(JSON.parse(mine.body)).toEqual({ ...(JSON.parse(theirs.body) as object), setpoint: '0.1.0' });
  });

  it('is unhealthy (503, {"health":"false"}) without a leader or with an alarm', async () => {
    const store = fx?.store;
    if (!store) throw new Error('no fixture');
    store.leader = '0';
    try {
      const r = await ask(`${fx?.endpoint}/health`);
      expect(r).toMatchObject({ status: 503, body: '{"health":"false"}\n', headers: { 'content-type': 'text/plain; charset=utf-8' } });
    } finally {
      store.leader = store.memberId;
    }
    await store.alarm('ACTIVATE', store.memberId, 'NOSPACE');
    try {
      expect((await ask(`${fx?.endpoint}/health`)).status).toBe(503);
    } finally {
      await store.alarm('DEACTIVATE', store.memberId, 'NOSPACE');
    }
    expect(await ask(`${fx?.endpoint}/health`)).toMatchObject({ status: 200, body: '{"health":"true"}' });
  });

  it('exposes Prometheus metrics under etcd names, with per-method gRPC counters', async () => {
    const c = new EtcdGrpcClient(fx?.endpoint.replace('http://', '') ?? '');
    try {
      await c.call('KV', 'Put', { key: bytes('m'), value: bytes('1') });
      await c.call('KV', 'Range', { key: bytes('') }).catch(() => undefined);
    } finally {
      c.close();
    }
    fx?.metrics.hasLeader.set(1);
    fx?.metrics.walFsyncSeconds.observe(0.003);
    const r = await ask(`${fx?.endpoint}/metrics`);
    const theirs = await ask(`${ref?.endpoint}/metrics`);
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe(theirs.headers['content-type']);
    const text = r.body;
    expect(text).toContain('grpc_server_handled_total{grpc_type="unary",grpc_service="etcdserverpb.KV",grpc_method="Put",grpc_code="OK"} 1');
    expect(text).toContain('grpc_server_handled_total{grpc_type="unary",grpc_service="etcdserverpb.KV",grpc_method="Range",grpc_code="InvalidArgument"} 1');
    expect(text).toContain('etcd_server_has_leader 1');
    expect(text).toContain('etcd_disk_wal_fsync_duration_seconds_bucket{le="0.004"} 1');
    // Every etcd metric we define exists in etcd's own /metrics with the same type.
    const types = (body: string) => new Map([...body.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => [m[1], m[2]]));
    const ours = types(text);
    const etcds = types(theirs.body);
    for (const [name, type] of ours) {
      if (!name?.startsWith('etcd_') && !name?.startsWith('grpc_')) continue;
      if (name === 'etcd_network_peer_round_trip_time_seconds') continue; // only a clustered etcd has it
      expect({ name, type: etcds.get(name) }).toEqual({ name, type });
    }
    expect(Number(/etcd_network_client_grpc_received_bytes_total (\d+)/.exec(text)?.[1])).toBeGreaterThan(0);
  });

  it('serves HTTP keep-alive requests and gRPC on the same port at once', async () => {
    const c = new EtcdGrpcClient(fx?.endpoint.replace('http://', '') ?? '');
    try {
      const results = await Promise.all([
        ...Array.from({ length: 20 }, () => ask(`${fx?.endpoint}/health`).then((a) => a.status)),
        ...Array.from({ length: 20 }, (_, i) => c.call('KV', 'Put', { key: bytes(`mix${i}`), value: bytes('x') }).then(() => 200)),
      ]);
      expect(results.every((s) => s === 200)).toBe(true);
    } finally {
      c.close();
    }
  });
});
