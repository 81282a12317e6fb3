// Leader election on a real API server on a real etcd 3.4, with time driven by ManualClocks (one per
// candidate, so their wall clocks can disagree): a candidate takes over a dead leader's Lease exactly at
// its first attempt one lease duration after it last saw the record change, whatever the wall clocks say;
// a released Lease is taken within one retry period; a leader that sees another holder stops leading;
// and the fencing token of a deposed leader is refused by the API server with a 409 naming the lease.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClientError, isApiStatusError } from '../../src/client/api-status-error.js';
import { LeaderElector, validateTiming, type LeaderCallbacks } from '../../src/client/leader-election.js';
import type { LeaseObject } from '../../src/client/lease-record.js';
import { ManualClock } from '../../src/client/manual-clock.js';
import { ResourceClient } from '../../src/client/resource-client.js';
import { CONFIGMAPS, LEASES } from '../../src/client/resource-types.js';
import { RestClient, type RequestOptions } from '../../src/client/rest-client.js';
import { waitFor } from '../../src/harness/wait.js';
import { startRegistryServer, type RegistryServer } from '../apiserver/registry/registry-server.js';

const TIMING = { leaseDurationMs: 2_000, renewDeadlineMs: 1_500, retryPeriodMs: 400 };

interface Candidate {
  readonly name: string;
  readonly clock: ManualClock;
  readonly elector: LeaderElector;
  readonly log: string[];
  readonly ac: AbortController;
  done: boolean;
  running: Promise<void> | undefined;
}

describe('LeaderElector', () => {
  let s: RegistryServer;
  let rest: RestClient;
  let leases: ResourceClient<LeaseObject>;
  let n = 0;
  beforeAll(async () => {
    s = await startRegistryServer('etcd');
    rest = new RestClient({ server: s.ts.url, tls: { ca: s.ts.ca.certPem, cert: s.ts.admin.certPem, key: s.ts.admin.keyPem } });
    leases = new ResourceClient<LeaseObject>(rest, LEASES);
  });
  afterAll(async () => {
    rest?.close();
    await s?.stop();
  });

  function candidate(lease: string, name: string, wallStart = Date.UTC(2026, 0, 1), releaseOnCancel = true, via: RestClient = rest): Candidate {
    const clock = new ManualClock(0, wallStart);
    const log: string[] = [];
    const callbacks: LeaderCallbacks = {
      onStartedLeading: (signal) => {
        log.push(`started@${clock.now()}`);
        signal.addEventListener('abort', () => log.push(`leadership-aborted@${clock.now()}`));
      },
      onStoppedLeading: () => log.push(`stopped@${clock.now()}`),
      onNewLeader: (id) => log.push(`leader ${id}`),
    };
    const elector = new LeaderElector(via, { ...TIMING, lock: { namespace: 'kube-system', name: lease }, identity: name, callbacks, clock, random: () => 0, releaseOnCancel });
    return { name, clock, elector, log, ac: new AbortController(), done: false, running: undefined };
  }

  function start(c: Candidate): void {
    c.running = c.elector.run(c.ac.signal).finally(() => (c.done = true));
  }

  /** Waits until every candidate is asleep on its clock (or finished): its last attempt has been answered. */
  async function settle(cs: readonly Candidate[]): Promise<void> {
    await waitFor('candidates to settle', () => cs.every((c) => c.done || c.clock.timers() === 1), { timeoutMs: 30_000, intervalMs: 5 });
  }

  /** Moves every candidate's clock on by ms, in steps of at most `step`, settling after each. */
  async function advance(cs: readonly Candidate[], ms: number, step = 100): Promise<void> {
    for (let left = ms; left > 0; left -= step) {
      for (const c of cs) if (!c.done) c.clock.advance(Math.min(step, left));
      await settle(cs);
    }
  }

  const leaseName = (): string => `le-${process.pid}-${n++}`;

  it('checks its timing as client-go does', () => {
    expect(() => validateTiming({ leaseDurationMs: 2_000, renewDeadlineMs: 2_000, retryPeriodMs: 400 })).toThrow('leaseDuration must be greater than renewDeadline');
    expect(() => validateTiming({ leaseDurationMs: 2_000, renewDeadlineMs: 400, retryPeriodMs: 400 })).toThrow('renewDeadline must be greater than retryPeriod*1.2');
    expect(() => validateTiming({ leaseDurationMs: 2_500, renewDeadlineMs: 1_500, retryPeriodMs: 400 })).toThrow('whole number of seconds');
  });

  it("takes over a dead leader's lease one lease duration after it last saw a change, by its own clock", async () => {
    const name = leaseName();
    // b's wall clock is a year ahead: comparing renewTime with it would take over at once.
    const a = candidate(name, 'a', Date.UTC(2026, 0, 1), false);
    const b = candidate(name, 'b', Date.UTC(2027, 0, 1));
    try {
      start(a);
      await waitFor('a to lead', () => a.elector.isLeader());
      await settle([a]);
      const first = await leases.get('kube-system', name);
      expect(first.spec).toMatchObject({ holderIdentity: 'a', leaseDurationSeconds: 2, leaseTransitions: 0 });
      expect(first.spec?.renewTime).toMatch(/^2026-01-01T00:00:00\.\d{6}Z$/);
      // a runs 200 ms ahead of b, so a's renewals and b's attempts never fall in the same step.
      await advance([a], 200);
      start(b);
      await settle([a, b]);
      expect(b.log).toEqual(['leader a']);
      // a renews every 400 ms; b keeps seeing changes and never takes over.
      await advance([a, b], 6_000);
      expect(b.elector.isLeader()).toBe(false);
      expect(a.elector.isLeader()).toBe(true);
      // a dies (stops renewing, no release): b's last observation of a change is its latest attempt.
      a.ac.abort();
      await a.running;
      const lastSeen = b.clock.now();
      // b attempts every 400 ms: still held at +1.6 s, taken at the first attempt at or past +2 s.
      await advance([b], 1_600);
      expect(b.elector.isLeader()).toBe(false);
      await advance([b], 400);
      await waitFor('b to lead', () => b.elector.isLeader());
      expect(b.log).toEqual(['leader a', 'leader b', `started@${lastSeen + 2_000}`]);
      const taken = await leases.get('kube-system', name);
      expect(taken.spec).toMatchObject({ holderIdentity: 'b', leaseTransitions: 1 });
      expect(taken.spec?.acquireTime).toMatch(/^2027-01-01T/);
      expect(b.elector.fencingToken()).toBe(`kube-system/${name}/b/1`);
    } finally {
      a.ac.abort();
      b.ac.abort();
      await Promise.all([a.running, b.running]);
    }
  }, 120_000);

  it('releases on a graceful stop, the next candidate takes over within one retry period, and the old token is fenced', async () => {
    const name = leaseName();
    const a = candidate(name, 'a');
    const b = candidate(name, 'b');
    const configmaps = new ResourceClient(rest, CONFIGMAPS);
    try {
      start(a);
      await waitFor('a to lead', () => a.elector.isLeader());
      start(b);
      await settle([a, b]);
      const fencedA = a.elector.fencedClient(rest);
      await new ResourceClient(fencedA, CONFIGMAPS).create({ metadata: { name: `${name}-a`, namespace: 'default' }, data: {} });
      a.ac.abort();
      await a.running;
      expect(a.log).toEqual(['leader a', 'started@0', 'leadership-aborted@0', 'stopped@0']);
      const released = await leases.get('kube-system', name);
      expect(released.spec).toMatchObject({ holderIdentity: '', leaseDurationSeconds: 1, leaseTransitions: 0 });
      await advance([b], 400);
      await waitFor('b to lead', () => b.elector.isLeader());
      expect(b.log).toEqual(['leader a', 'leader b', 'started@400']);
      expect((await leases.get('kube-system', name)).spec).toMatchObject({ holderIdentity: 'b', leaseTransitions: 1 });
      // a's token names transition 0; the lease has moved on.
      const err = await new ResourceClient(fencedA, CONFIGMAPS).create({ metadata: { name: `${name}-a2`, namespace: 'default' }, data: {} }).catch((e: unknown) => e);
      expect(isApiStatusError(err, 'Conflict')).toBe(true);
      expect((err as Error).message).toBe(`Operation cannot be fulfilled on leases.coordination.k8s.io "${name}": lease kube-system/${name} is held by "b" (transitions 1), not by the caller "a" (transitions 0)`);
      await new ResourceClient(b.elector.fencedClient(rest), CONFIGMAPS).create({ metadata: { name: `${name}-b`, namespace: 'default' }, data: {} });
      // Reads are not fenced.
      expect((await new ResourceClient(fencedA, CONFIGMAPS).get('default', `${name}-b`)).metadata?.name).toBe(`${name}-b`);
      await expect(configmaps.get('default', `${name}-a2`)).rejects.toThrow('not found');
    } finally {
      a.ac.abort();
      b.ac.abort();
      await Promise.all([a.running, b.running]);
    }
  }, 120_000);

  it('stops leading at once when a renewal finds another holder', async () => {
    const name = leaseName();
    const a = candidate(name, 'a');
    try {
      start(a);
      await waitFor('a to lead', () => a.elector.isLeader());
      await settle([a]);
      const cur = await leases.get('kube-system', name);
      await leases.update({ ...cur, spec: { ...cur.spec, holderIdentity: 'intruder', leaseTransitions: 1 } });
      await advance([a], 400);
      await waitFor('a to finish', () => a.done);
      expect(a.elector.isLeader()).toBe(false);
      expect(a.log).toEqual(['leader a', 'started@0', 'leader intruder', 'leadership-aborted@400', 'stopped@400']);
      // Lost, not stopped: it does not release a lease that is no longer its own.
      expect((await leases.get('kube-system', name)).spec?.holderIdentity).toBe('intruder');
    } finally {
      a.ac.abort();
      await a.running;
    }
  }, 60_000);

  it('stops leading when no renewal succeeds within the renew deadline, and does not release', async () => {
    // The API server becomes unreachable for this candidate only (a client that fails as a dead connection does).
    class Cut extends RestClient {
      cut = false;
      override request<T = unknown>(o: RequestOptions): Promise<T> {
        if (this.cut) return Promise.reject(new ClientError('CLIENT_TRANSPORT', 'connect ECONNREFUSED'));
        return super.request<T>(o);
      }
    }
    const cut = new Cut({ server: s.ts.url, tls: { ca: s.ts.ca.certPem, cert: s.ts.admin.certPem, key: s.ts.admin.keyPem } });
    const name = leaseName();
    const a = candidate(name, 'a', Date.UTC(2026, 0, 1), true, cut);
    try {
      start(a);
      await waitFor('a to lead', () => a.elector.isLeader());
      await settle([a]);
      cut.cut = true;
      // Renewal rounds start every 400 ms; the one starting at 400 tries at 400, 800, 1200, 1600 and gives up at 1900.
      await advance([a], 1_800);
      expect(a.elector.isLeader()).toBe(true);
      await advance([a], 100);
      await waitFor('a to finish', () => a.done);
      expect(a.log).toEqual(['leader a', 'started@0', 'leadership-aborted@1900', 'stopped@1900']);
      cut.cut = false;
      expect((await leases.get('kube-system', name)).spec?.holderIdentity).toBe('a');
    } finally {
      a.ac.abort();
      await a.running;
      cut.close();
    }
  }, 60_000);
});
