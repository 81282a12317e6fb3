// The progress tracker's quorum arithmetic and member iteration, which run on every append response and
// keep their arrays between calls: checked against the plain sort-based definitions.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Progress, ProgressTracker } from '../../src/raft/progress.js';
import { MAX_NODE_ID, compareNodeIds } from '../../src/raft/types.js';

/** Nine ids at the top of uint64, which a Number would round to one value: the tracker must keep them apart. */
const WIDE_IDS = Array.from({ length: 9 }, (_, i) => MAX_NODE_ID - BigInt(i));

describe('ProgressTracker', () => {
  it('committed() is the quorum-th largest voter match, call after call, as voters come and go and matches move', () => {
    const trk = new ProgressTracker(256);
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.integer({ min: 1, max: 9 }), fc.nat(1000), fc.boolean()), { minLength: 1, maxLength: 9 }), fc.nat(1000), (members, bump) => {
        trk.clear();
        const voters = new Set<bigint>();
        const learners = new Set<bigint>();
        for (const [i, match, voter] of members) {
          const id = WIDE_IDS[i - 1] as bigint;
          const pr = new Progress(match + 1, 256, !voter);
          pr.match = match;
          trk.set(id, pr);
          if (voter) voters.add(id);
          else learners.add(id);
        }
        for (const id of voters) learners.delete(id);
        trk.setConfig(voters, learners);
        const expected = (): number => {
          const matches = [...trk.voters].map((id) => trk.progress.get(id)?.match ?? 0).sort((a, b) => b - a);
          return trk.voters.size === 0 ? Number.POSITIVE_INFINITY : (matches[Math.floor(trk.voters.size / 2)] as number);
        };
        expect(trk.committed()).toBe(expected());
        // Append responses move a progress's match in place, between configuration changes.
        const first = trk.progress.get(WIDE_IDS[(members[0]?.[0] ?? 1) - 1] as bigint);
        if (first) first.match += bump;
        expect(trk.committed()).toBe(expected());
        expect(trk.ids()).toEqual([...trk.progress.keys()].sort(compareNodeIds));
      }),
      { numRuns: 500 },
    );
  });

  it('ids() notices a member replaced by another, not only a change in count', () => {
    const trk = new ProgressTracker(256);
    trk.set(1n, new Progress(1, 256, false));
    trk.set(2n, new Progress(1, 256, false));
    expect(trk.ids()).toEqual([1n, 2n]);
    trk.delete(2n);
    trk.set(3n, new Progress(1, 256, false));
    expect(trk.ids()).toEqual([1n, 3n]);
  });

  it("committed() follows a voter's progress replaced by a new one (a new leader resets them)", () => {
    const trk = new ProgressTracker(256);
    const pr = (match: number): Progress => Object.assign(new Progress(match + 1, 256, false), { match });
    trk.set(1n, pr(5));
    trk.set(2n, pr(5));
    trk.setConfig([1n, 2n, 3n], []);
    // 3 has no progress yet: it counts as nothing matched.
    expect(trk.committed()).toBe(5);
    trk.set(1n, pr(1));
    expect(trk.committed()).toBe(1);
  });
});
