// Request ids key the proposal waiters, so a restarted member must never draw an id its previous start
// used: an entry proposed before the crash and committed after it would settle the new request's waiter
// with the old request's answer. The member-loop simulation found this (seed 1 failed with ack-wrong-entry
// when ids were `<member>.<counter>` and the counter started again at 0); this pins it down directly.
import { describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { MemberCore } from '../../../src/server/member/member-core.js';
import type { MemberClock } from '../../../src/server/member/member-clock.js';
import type { MemberConfig } from '../../../src/server/member/member-config.js';
import { realClock } from '../../../src/server/member/member-clock.js';
import { runMemberSeed } from '../../../src/sim/member-loop/run-member-seed.js';

function coreStartedAt(epochMs: number): MemberCore {
  const clock: MemberClock = { ...realClock, epochMs: () => epochMs };
  const cfg: MemberConfig = {
    name: 'm1',
    dataDir: '',
    peerURLs: [],
    clientURLs: [],
    initialCluster: new Map(),
    initialClusterState: 'new',
    initialClusterToken: 't',
    heartbeatMs: 100,
    electionMs: 1000,
    snapshotCount: 10_000,
    snapshotCatchUpEntries: 5000,
    quotaBackendBytes: 1 << 30,
    logger: pino({ level: 'silent' }),
    clock,
    transport: () => Promise.reject(new Error('unused')),
  };
  const c = new MemberCore(cfg);
  c.memberId = 0x1234n;
  return c;
}

describe('request ids', () => {
  it('differ between two starts of one member, from the first id on', () => {
    const before = coreStartedAt(1_767_225_600_000);
    const after = coreStartedAt(1_767_225_600_100);
    const used = new Set(Array.from({ length: 100 }, () => before.nextReqId()));
    expect(used.size).toBe(100);
    for (let i = 0; i < 100; i++) expect(used.has(after.nextReqId())).toBe(false);
  });

  it('the member-loop seed that found the reuse is clean', async () => {
    const r = await runMemberSeed({ seed: 1, nodes: 3, steps: 600, memberLoop: true });
    expect(r.violation?.message).toBeUndefined();
  });
});
