// The event recorder with client-go's correlator, on a real API server on a real etcd 3.4, time on a
// ManualClock: repeats are one Event counting up (PATCHed), similar events past 10 in 10 minutes are
// combined into one, the per-object spam filter lets 25 through then one per 5 minutes, and a repeat of an
// Event that has gone is written anew.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventCorrelator, type CoreEvent } from '../../src/client/event-correlator.js';
import { ApiEventRecorder } from '../../src/client/event-recorder.js';
import type { KubeObject } from '../../src/client/kube-object.js';
import { ManualClock } from '../../src/client/manual-clock.js';
import { ResourceClient } from '../../src/client/resource-client.js';
import { EVENTS } from '../../src/client/resource-types.js';
import { RestClient } from '../../src/client/rest-client.js';
import { startRegistryServer, type RegistryServer } from '../apiserver/registry/registry-server.js';

const podRef = (name: string): KubeObject => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default', uid: `uid-${name}` } });

describe('ApiEventRecorder', () => {
  let s: RegistryServer;
  let rest: RestClient;
  let events: ResourceClient<CoreEvent>;
  beforeAll(async () => {
    s = await startRegistryServer('etcd');
    rest = new RestClient({ server: s.ts.url, tls: { ca: s.ts.ca.certPem, cert: s.ts.admin.certPem, key: s.ts.admin.keyPem } });
    events = new ResourceClient<CoreEvent>(rest, EVENTS);
  });
  afterAll(async () => {
    rest?.close();
    await s?.stop();
  });

  const eventsOf = async (name: string): Promise<CoreEvent[]> =>
    (await events.list('default', { fieldSelector: `involvedObject.name=${name}` })).items.sort((a, b) => a.firstTimestamp.localeCompare(b.firstTimestamp) || a.message.localeCompare(b.message));

  it('counts repeats into one Event with the first and last timestamps', async () => {
    const clock = new ManualClock(0, Date.UTC(2026, 0, 1));
    const r = new ApiEventRecorder(rest, { component: 'default-scheduler' }, { clock });
    const p = podRef('repeat');
    for (let i = 0; i < 3; i++) {
      r.event(p, 'Warning', 'FailedScheduling', '0/1 nodes are available: 1 Insufficient cpu.');
      clock.advance(1_000);
    }
    r.event(p, 'Normal', 'Scheduled', 'Successfully assigned default/repeat to n1');
    await r.flush();
    const got = await eventsOf('repeat');
    expect(got.map((e) => [e.reason, e.count, e.firstTimestamp, e.lastTimestamp, e.source.component, e.involvedObject.uid])).toEqual([
      ['FailedScheduling', 3, '2026-01-01T00:00:00Z', '2026-01-01T00:00:02Z', 'default-scheduler', 'uid-repeat'],
      ['Scheduled', 1, '2026-01-01T00:00:03Z', '2026-01-01T00:00:03Z', 'default-scheduler', 'uid-repeat'],
    ]);
  });

  it('combines similar events past 10 in 10 minutes, and starts over after 10 quiet minutes', async () => {
    const clock = new ManualClock(0, Date.UTC(2026, 0, 1));
    const r = new ApiEventRecorder(rest, { component: 'c' }, { clock });
    const p = podRef('similar');
    for (let i = 1; i <= 12; i++) {
      r.event(p, 'Warning', 'BackOff', `message ${String(i).padStart(2, '0')}`);
      clock.advance(1_000);
    }
    await r.flush();
    let got = await eventsOf('similar');
    expect(got.filter((e) => !e.message.startsWith('(')).map((e) => `${e.message} ${e.count}`)).toEqual(Array.from({ length: 9 }, (_, i) => `message 0${i + 1} 1`));
    const combined = got.filter((e) => e.message.startsWith('('));
    expect(combined.map((e) => [e.message, e.count, e.firstTimestamp, e.lastTimestamp])).toEqual([['(combined from similar events): message 12', 3, '2026-01-01T00:00:09Z', '2026-01-01T00:00:11Z']]);
    // After more than 10 minutes without one, a similar event stands alone again.
    clock.advance(601_000);
    r.event(p, 'Warning', 'BackOff', 'message 13');
    await r.flush();
    got = await eventsOf('similar');
    expect(got.filter((e) => e.message === 'message 13').map((e) => e.count)).toEqual([1]);
  });

  it('lets 25 events per object through, then one per 5 minutes', async () => {
    const clock = new ManualClock(0, Date.UTC(2026, 0, 1));
    const r = new ApiEventRecorder(rest, { component: 'c' }, { clock });
    const p = podRef('spam');
    for (let i = 0; i < 30; i++) r.event(p, 'Normal', `Reason${i}`, 'm');
    await r.flush();
    expect(await eventsOf('spam')).toHaveLength(25);
    clock.advance(299_000);
    r.event(p, 'Normal', 'Late', 'm');
    clock.advance(2_000);
    r.event(p, 'Normal', 'OnTime', 'm');
    r.event(p, 'Normal', 'TooSoon', 'm');
    await r.flush();
    expect((await eventsOf('spam')).map((e) => e.reason).filter((x) => !x.startsWith('Reason'))).toEqual(['OnTime']);
    // Another object has its own bucket.
    r.event(podRef('spam-other'), 'Normal', 'Fine', 'm');
    await r.flush();
    expect(await eventsOf('spam-other')).toHaveLength(1);
  });

  it('writes a repeat anew when its Event is gone', async () => {
    const clock = new ManualClock(0, Date.UTC(2026, 0, 1));
    const r = new ApiEventRecorder(rest, { component: 'c' }, { clock });
    const p = podRef('gone');
    r.event(p, 'Normal', 'X', 'm');
    await r.flush();
    const [first] = await eventsOf('gone');
    await events.delete('default', first!.metadata.name);
    clock.advance(1_000);
    r.event(p, 'Normal', 'X', 'm');
    await r.flush();
    expect((await eventsOf('gone')).map((e) => [e.metadata.name, e.count])).toEqual([[first!.metadata.name, 2]]);
  });
});

describe('EventCorrelator', () => {
  it('bounds its caches', () => {
    const clock = new ManualClock();
    const c = new EventCorrelator({ clock, cacheSize: 2 });
    const ev = (name: string): CoreEvent => ({
      metadata: { name: `${name}.1`, namespace: 'default' },
      involvedObject: { kind: 'Pod', name, namespace: 'default' },
      reason: 'R',
      message: 'm',
      type: 'Normal',
      source: { component: 'c' },
      firstTimestamp: 't',
      lastTimestamp: 't',
      count: 1,
    });
    const n = (): string => 'fresh';
    expect(c.correlate(ev('a'), n)).toMatchObject({ skip: false, event: { count: 1 } });
    expect(c.correlate(ev('a'), n)).toMatchObject({ skip: false, event: { count: 2 }, patch: { count: 2 } });
    c.correlate(ev('b'), n);
    c.correlate(ev('c'), n);
    // a fell out of the 2-key cache: it starts again at 1.
    expect(c.correlate(ev('a'), n)).toMatchObject({ skip: false, event: { count: 1 } });
  });
});
