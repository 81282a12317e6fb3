// etcd 3.4's --strict-reconfig-check decisions, on member lists, started members and link ages alone.
import { describe, expect, it } from 'vitest';
import { checkAdd, checkPromote, checkRemove, HEALTH_INTERVAL_MS } from '../../../src/server/member/reconfig-check.js';
import type { ReconfigMember, ReconfigView } from '../../../src/server/member/reconfig-check.js';
import { flagsFromEnv, parseStoreFlags } from '../../../src/server/embed/store-flags.js';

const NOW = 1_000_000;
const LONG_AGO = NOW - HEALTH_INTERVAL_MS - 1;
const JUST_NOW = NOW - 10;

/** `voter(2)` started, `voter(2, false)` added but not started yet; learners likewise. */
const voter = (id: bigint, started = true): ReconfigMember => ({ id, name: started ? `m${id}` : '', isLearner: false });
const learner = (id: bigint, started = true): ReconfigMember => ({ ...voter(id, started), isLearner: true });

/** The view of member 1; `links` maps a peer to when its link came up (absent: down). */
function view(members: ReconfigMember[], links: Record<string, number> = {}): ReconfigView {
  return { self: 1n, members, activeSince: (id) => links[id.toString()], now: NOW };
}

/** Every peer of member 1 connected for longer than the health interval. */
function allUp(members: ReconfigMember[]): ReconfigView {
  return view(members, Object.fromEntries(members.filter((m) => m.id !== 1n).map((m) => [m.id, LONG_AGO])));
}

describe('strict reconfig check: add', () => {
  it('lets a healthy cluster grow, by a voter or a learner', () => {
    const ms = [voter(1n), voter(2n), voter(3n)];
    expect(checkAdd(allUp(ms), false)).toBeUndefined();
    expect(checkAdd(allUp(ms), true)).toBeUndefined();
  });

  it('lets a single member add a voter at once (one started of two after the add)', () => {
    expect(checkAdd(view([voter(1n)]), false)).toBeUndefined();
  });

  it('refuses a voter that would leave fewer started voters than a quorum', () => {
    // 2 started of 4 after the add: quorum 3.
    const ms = [voter(1n), voter(2n), voter(3n, false)];
    expect(checkAdd(allUp(ms), false)).toBe('MEMBER_NOT_ENOUGH_STARTED');
    // 1 started of 3 after the add.
    expect(checkAdd(allUp([voter(1n), voter(2n, false)]), false)).toBe('MEMBER_NOT_ENOUGH_STARTED');
    // A learner does not count among the voters: adding one is only a question of links.
    expect(checkAdd(allUp(ms), true)).toBeUndefined();
  });

  it('refuses any add until every voter has been connected for the health interval', () => {
    const ms = [voter(1n), voter(2n), voter(3n)];
    expect(checkAdd(view(ms, { 2: LONG_AGO, 3: JUST_NOW }), false)).toBe('UNHEALTHY');
    expect(checkAdd(view(ms, { 2: LONG_AGO, 3: JUST_NOW }), true)).toBe('UNHEALTHY');
    expect(checkAdd(view(ms, { 2: LONG_AGO }), true)).toBe('UNHEALTHY');
    expect(checkAdd(view(ms, { 2: LONG_AGO, 3: NOW - HEALTH_INTERVAL_MS }), true)).toBe('UNHEALTHY');
  });

  it('does not ask for links to learners', () => {
    expect(checkAdd(view([voter(1n), voter(2n), learner(3n, false)], { 2: LONG_AGO }), false)).toBeUndefined();
  });
});

describe('strict reconfig check: remove', () => {
  it('lets a healthy cluster shrink', () => {
    expect(checkRemove(allUp([voter(1n), voter(2n), voter(3n)]), 3n)).toBeUndefined();
    expect(checkRemove(allUp([voter(1n), voter(2n), voter(3n)]), 1n)).toBeUndefined();
  });

  it('always lets a learner go', () => {
    expect(checkRemove(view([voter(1n), voter(2n, false), learner(3n)]), 3n)).toBeUndefined();
  });

  it('refuses a removal that leaves fewer started voters than a quorum of the rest', () => {
    // The rest: 2 and 3, one started; quorum 2.
    expect(checkRemove(allUp([voter(1n), voter(2n), voter(3n, false)]), 2n)).toBe('MEMBER_NOT_ENOUGH_STARTED');
    // Removing the one that never started leaves 2 of 2 started.
    expect(checkRemove(allUp([voter(1n), voter(2n), voter(3n, false)]), 3n)).toBeUndefined();
    // The last voter cannot go.
    expect(checkRemove(view([voter(1n)]), 1n)).toBe('MEMBER_NOT_ENOUGH_STARTED');
  });

  it('always lets a member that is down go', () => {
    // 1 cannot reach 2 or 3: removing 3 is still allowed (it is not part of the quorum that is up).
    expect(checkRemove(view([voter(1n), voter(2n), voter(3n)]), 3n)).toBeUndefined();
  });

  it('refuses removing a connected member when too few of the rest have been connected for the health interval', () => {
    // 4 voters; after removing 4, 3 remain and need 2 connected: 1 itself and 2 (3 is down).
    expect(checkRemove(view([voter(1n), voter(2n), voter(3n), voter(4n)], { 2: LONG_AGO, 4: LONG_AGO }), 4n)).toBeUndefined();
    // 2 only just connected: only 1 itself counts.
    expect(checkRemove(view([voter(1n), voter(2n), voter(3n), voter(4n)], { 2: JUST_NOW, 4: LONG_AGO }), 4n)).toBe('UNHEALTHY');
    // The member removed is taken off the count even when it only just connected (as etcd counts).
    expect(checkRemove(view([voter(1n), voter(2n), voter(3n)], { 2: LONG_AGO, 3: JUST_NOW }), 3n)).toBe('UNHEALTHY');
  });

  it('checks removing itself against its links to the rest', () => {
    expect(checkRemove(view([voter(1n), voter(2n), voter(3n)], { 2: LONG_AGO, 3: LONG_AGO }), 1n)).toBeUndefined();
    expect(checkRemove(view([voter(1n), voter(2n), voter(3n)], { 2: LONG_AGO }), 1n)).toBe('UNHEALTHY');
  });

  it('checks an unknown id like a member that is down (the apply then refuses it as not found)', () => {
    expect(checkRemove(view([voter(1n), voter(2n), voter(3n)]), 99n)).toBeUndefined();
    expect(checkRemove(allUp([voter(1n), voter(2n, false), voter(3n, false)]), 99n)).toBe('MEMBER_NOT_ENOUGH_STARTED');
  });
});

describe('strict reconfig check: promote', () => {
  it('counts the learner promoted as a started voter', () => {
    expect(checkPromote(view([voter(1n), learner(2n)]))).toBeUndefined();
    expect(checkPromote(view([voter(1n), voter(2n), voter(3n), learner(4n)]))).toBeUndefined();
  });

  it('refuses a promotion that would leave fewer started voters than a quorum', () => {
    // After the promotion: 4 voters, 2 started (1 and the learner); quorum 3.
    expect(checkPromote(view([voter(1n), voter(2n, false), voter(3n, false), learner(4n)]))).toBe('MEMBER_NOT_ENOUGH_STARTED');
    // 3 voters, 2 started: fine.
    expect(checkPromote(view([voter(1n), voter(2n, false), learner(4n)]))).toBeUndefined();
  });

  it('does not look at links', () => {
    expect(checkPromote(view([voter(1n), voter(2n), voter(3n), learner(4n)], {}))).toBeUndefined();
  });
});

describe('--strict-reconfig-check', () => {
  it('is on unless turned off, by flag or by ETCD_STRICT_RECONFIG_CHECK', () => {
    expect(parseStoreFlags({}).strictReconfigCheck).toBe(true);
    expect(parseStoreFlags({ 'strict-reconfig-check': 'false' }).strictReconfigCheck).toBe(false);
    expect(parseStoreFlags(flagsFromEnv({ ETCD_STRICT_RECONFIG_CHECK: 'false' })).strictReconfigCheck).toBe(false);
    expect(() => parseStoreFlags({ 'strict-reconfig-check': 'no' })).toThrow(/strict-reconfig-check/);
  });
});
