// etcd's JSON gateway, side by side: the same HTTP requests against a one-member etcd 3.4 and a one-member
// Setpoint, the same statuses and bodies (ids, terms and sizes normalised) — unary calls, errors, malformed
// JSON, unknown paths and methods, the watch and lease keep-alive streams; then Debian's python3-etcd3gw
// (test/differential/gateway/etcd3gw-session.py) gives the same results on both.
import { execFile } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { startBoth } from '../../src/harness/store-cluster.js';
import type { StoreCluster } from '../../src/harness/store-cluster.js';
import { suiteClusters } from '../helpers/suite-clusters.js';

const here = dirname(fileURLToPath(import.meta.url));
const b64 = (s: string): string => Buffer.from(s).toString('base64');

interface Answer {
  readonly status: number;
  readonly type: string | null;
  readonly body: unknown;
}

/** Ids, terms, sizes and raft indexes differ by nature; each id is replaced by the order it was first seen in. */
function normalize(v: unknown, ids: Map<string, string>): unknown {
  if (Array.isArray(v)) return v.map((x) => normalize(x, ids));
  if (v === null || typeof v !== 'object') return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
    if (['cluster_id', 'member_id', 'raft_term', 'raftTerm', 'dbSize', 'dbSizeInUse', 'raftIndex', 'raftAppliedIndex', 'hash'].includes(k)) continue;
    if (['ID', 'lease', 'leader', 'peerURLs', 'clientURLs'].includes(k) && typeof x === 'string' && x !== '0') {
      if (!ids.has(x)) ids.set(x, `<id${ids.size + 1}>`);
      out[k] = ids.get(x);
    } else if (['peerURLs', 'clientURLs'].includes(k)) out[k] = '<urls>';
    else out[k] = normalize(x, ids);
  }
  return out;
}

async function call(base: string, path: string, body: string, method = 'POST'): Promise<Answer> {
  const res = await fetch(base + path, method === 'POST' ? { method, body } : { method });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // text/plain answers stay text
  }
  return { status: res.status, type: res.headers.get('content-type'), body: parsed };
}

/** Reads a streaming answer's first `n` lines (or what came within 10 s, so a missing line fails the comparison, not the run). */
async function streamLines(base: string, path: string, body: string, n: number, during?: () => Promise<void>): Promise<unknown[]> {
  const ac = new AbortController();
  const deadline = setTimeout(() => ac.abort(), 10_000);
  const res = await fetch(base + path, { method: 'POST', body, signal: ac.signal });
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const lines: unknown[] = [];
  let buf = '';
  let acted = false;
  try {
    while (lines.length < n) {
      const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true as const }));
      if (done) break;
      buf += Buffer.from(value).toString('utf8');
      let at: number;
      while ((at = buf.indexOf('\n')) >= 0) {
        lines.push(JSON.parse(buf.slice(0, at)));
        buf = buf.slice(at + 1);
      }
      // The watch is created: now make the events it should see.
      if (!acted && during && lines.length > 0) {
        acted = true;
        await during();
      }
    }
  } finally {
    clearTimeout(deadline);
    ac.abort();
  }
  return lines;
}

/** The scripted session, in order, on one endpoint. */
async function session(base: string): Promise<unknown[]> {
  const out: unknown[] = [];
  const ids = new Map<string, string>();
  const step = async (path: string, body: unknown, method = 'POST'): Promise<Answer> => {
    const a = await call(base, path, typeof body === 'string' ? body : JSON.stringify(body), method);
    out.push([path, normalize(a, ids)]);
    return a;
  };
  await step('/v3/kv/put', { key: b64('foo'), value: b64('bar') });
  await step('/v3/kv/put', { key: b64('foo/a'), value: b64('1'), prev_kv: true });
  await step('/v3/kv/put', { key: b64('foo/a'), value: b64('2'), prevKv: true });
  await step('/v3beta/kv/put', { key: b64('foo/b'), value: b64('3') });
  await step('/v3/kv/range', { key: b64('foo') });
  await step('/v3/kv/range', { key: b64('foo/'), range_end: b64('foo0') });
  await step('/v3/kv/range', { key: b64('foo/'), rangeEnd: b64('foo0'), keysOnly: true, sort_order: 'DESCEND', sort_target: 'MOD' });
  await step('/v3/kv/range', { key: b64('foo/'), range_end: b64('foo0'), count_only: true, limit: '1' });
  await step('/v3/kv/range', { key: b64('none') });
  await step('/v3/kv/range', { key: b64('foo'), unknown_field: 1 });
  await step('/v3/kv/txn', {
    compare: [{ target: 'VALUE', key: b64('foo'), value: b64('bar') }],
    success: [{ request_put: { key: b64('foo'), value: b64('baz') } }, { request_range: { key: b64('foo') } }],
    failure: [{ request_delete_range: { key: b64('foo') } }],
  });
  await step('/v3/kv/txn', { compare: [{ target: 'VERSION', result: 'GREATER', key: b64('foo'), version: 10 }], failure: [{ request_range: { key: b64('foo/a') } }] });
  await step('/v3/kv/deleterange', { key: b64('foo/b'), prev_kv: true });
  const grant = await step('/v3/lease/grant', { TTL: 60 });
  const id = (grant.body as { ID: string }).ID;
  await step('/v3/kv/put', { key: b64('leased'), value: b64('x'), lease: id });
  await step('/v3/lease/timetolive', { ID: id, keys: true });
  await step('/v3/kv/lease/timetolive', { ID: id });
  await step('/v3/lease/leases', {});
  await step('/v3/kv/lease/leases', {});
  out.push(['keepalive', normalize(await streamLines(base, '/v3/lease/keepalive', JSON.stringify({ ID: id }), 1), ids)]);
  await step('/v3/lease/revoke', { ID: id });
  await step('/v3/kv/lease/revoke', { ID: id });
  await step('/v3/kv/range', { key: b64('leased') });
  // Errors: etcd's messages with grpc-gateway's statuses.
  await step('/v3/kv/put', { value: b64('no key') });
  await step('/v3/kv/put', { key: b64('k'), lease: '12345' });
  await step('/v3/kv/compaction', { revision: '1000' });
  await step('/v3/kv/compaction', { revision: '3', physical: true });
  await step('/v3/kv/range', { key: b64('foo'), revision: '2' });
  await step('/v3/kv/range', '{"key":');
  await step('/v3/kv/range', '');
  // Only the body's first JSON value is read, as Go's json.Decoder reads it; a string is not a message.
  await step('/v3/kv/range', `{"key":"${b64('foo')}"} garbage`);
  await step('/v3/kv/range', '"abc"');
  await step('/v3/kv/range', '[1]');
  await step('/v3/kv/nope', {});
  await step('/v3alpha/kv/range', {});
  await step('/nope', {});
  await step('/v3/kv/range', '', 'GET');
  await step('/v3/cluster/member/list', {});
  await step('/v3/maintenance/alarm', {});
  await step('/v3/maintenance/hash', {});
  const status = await call(base, '/v3/maintenance/status', '{}');
  out.push(['status', status.status, Object.keys(status.body as object).sort(), (status.body as { version: string }).version]);
  await step('/v3/auth/user/list', {});
  // Watch: history from revision 2, then a live put and delete.
  const rev = '2';
  const watched = await streamLines(base, '/v3/watch', JSON.stringify({ create_request: { key: b64('foo'), range_end: b64('fop'), start_revision: rev, prev_kv: true } }), 4, async () => {
    await call(base, '/v3/kv/put', JSON.stringify({ key: b64('foo/live'), value: b64('v') }));
    await call(base, '/v3/kv/deleterange', JSON.stringify({ key: b64('foo/live') }));
  });
  out.push(['watch', normalize(watched, ids)]);
  // A watch on a compacted revision answers with compact_revision and is cancelled.
  out.push(['watch compacted', normalize(await streamLines(base, '/v3/watch', JSON.stringify({ create_request: { key: b64('foo'), start_revision: '1' } }), 2), ids)]);
  return out;
}

describe('the JSON gateway: the same answers from etcd 3.4 and from Setpoint', () => {
  const clusters = suiteClusters();
  let etcd: StoreCluster | undefined;
  let setpoint: StoreCluster | undefined;

  beforeAll(async () => {
    const both = await startBoth({ size: 1, token: 'gateway', label: 'setpoint-gateway-' });
    etcd = clusters.track(both.etcd);
    setpoint = clusters.track(both.setpoint);
  }, 60_000);

  it('unary calls, errors, malformed JSON, unknown paths, watch and keep-alive streams', async () => {
    if (!etcd || !setpoint) throw new Error('clusters did not start');
    const [theirs, ours] = await Promise.all([session(etcd.endpoints()[0] as string), session(setpoint.endpoints()[0] as string)]);
    if (process.env['DIFF_DUMP']) console.log(JSON.stringify(theirs, null, 1));
    expect(ours).toEqual(theirs);
  }, 60_000);

  it("Debian's python3-etcd3gw: put, get, prefix, status, members, leases, delete, watch", async () => {
    if (!etcd || !setpoint) throw new Error('clusters did not start');
    const run = async (c: StoreCluster): Promise<unknown> => {
      const u = new URL(c.endpoints()[0] as string);
      const { stdout } = await promisify(execFile)('/usr/bin/python3', [join(here, 'gateway', 'etcd3gw-session.py'), u.hostname, u.port], { timeout: 30_000 });
      return JSON.parse(stdout);
    };
    const [theirs, ours] = await Promise.all([run(etcd), run(setpoint)]);
    expect(ours).toEqual(theirs);
    expect(JSON.stringify(ours)).toContain('"watched"');
  }, 60_000);
});
