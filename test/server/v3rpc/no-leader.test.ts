// A member without a leader, next to a real etcd 3.4 that has lost its quorum: etcdctl's watch (which asks
// for a leader) is refused the same way, and /health reports the same 503.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFixturePort } from '../helpers/client-port-harness.js';
import type { FixturePort } from '../helpers/client-port-harness.js';
import { startLeaderlessEtcd } from '../helpers/etcd-reference.js';
import type { ReferenceEtcd } from '../helpers/etcd-reference.js';
import { errorLines, etcdctl } from '../../../src/harness/etcdctl.js';

describe('without a leader, as etcd 3.4', () => {
  let fx: FixturePort | undefined;
  let ref: ReferenceEtcd | undefined;

  beforeAll(async () => {
    [fx, ref] = await Promise.all([startFixturePort(), startLeaderlessEtcd()]);
    fx.store.leader = '0';
  }, 120_000);

  afterAll(async () => {
    await Promise.all([fx?.close(), ref?.stop()]);
  });

  it('refuses etcdctl watch with "etcdserver: no leader"', async () => {
    const [mine, theirs] = await Promise.all([fx, ref].map((s) => etcdctl(s?.endpoint ?? '', ['watch', 'foo'])));
    expect(theirs?.code).not.toBe(0);
    expect({ code: mine?.code, errors: errorLines(mine?.stderr ?? '') }).toEqual({ code: theirs?.code, errors: errorLines(theirs?.stderr ?? '') });
    expect(errorLines(mine?.stderr ?? '')).toContain('watch was canceled (etcdserver: no leader)');
  });

  it('answers serializable reads', async () => {
    const [mine, theirs] = await Promise.all([fx, ref].map((s) => etcdctl(s?.endpoint ?? '', ['get', 'foo', '--consistency=s'])));
    expect(mine).toMatchObject({ code: 0, stdout: '' });
    expect(theirs).toMatchObject({ code: 0, stdout: '' });
  });

  it('reports 503 on /health', async () => {
    const answers = await Promise.all(
      [fx, ref].map(async (s) => {
        const res = await fetch(`${s?.endpoint}/health`);
        return { status: res.status, body: await res.text(), type: res.headers.get('content-type') };
      }),
    );
    expect(answers[0]).toEqual(answers[1]);
    expect(answers[0]?.status).toBe(503);
  });
});
