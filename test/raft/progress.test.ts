// The progress tracker's quorum arithmetic and member iteration, which run on every append response and
// keep their arrays between calls: checked against the plain sort-based definitions.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Progress, ProgressTracker } from '../../src/raft/progress.js';

describe('ProgressTracker', () => {
  it('committed() is the quorum-th largest voter match, call after call, as voters come and go', () => {
    const trk = new ProgressTracker(256);
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.integer({ min: 1, max: 9 }), fc.nat(1000), fc.boolean()), { minLength: 1, maxLength: 9 }), (members) => {
        trk.progress.clear();
        trk.voters = new Set();
        trk.learners = new Set();
        for (const [id, match, voter] of members) {
          const pr = new Progress(match + 1, 256, !voter);
          pr.match = match;
          trk.progress.set(id, pr);
          if (voter) trk.voters.add(id);
          else trk.learners.add(id);
        }
        for (const id of trk.voters) trk.learners.delete(id);
        const matches = [...trk.voters].map((id) => trk.progress.get(id)?.match ?? 0).sort((a, b) => b - a);
        const expected = trk.voters.size === 0 ? Number.POSITIVE_INFINITY : matches[Math.floor(trk.voters.size / 2)];
        expect(trk.committed()).toBe(expected);
        expect(trk.ids()).toEqual([...trk.progress.keys()].sort((a, b) => a - b));
      }),
      { numRuns: 500 },
    );
  });

  it('ids() notices a member replaced by another, not only a change in count', () => {
    const trk = new ProgressTracker(256);
    trk.progress.set(1, new Progress(1, 256, false));
    trk.progress.set(2, new Progress(1, 256, false));
    expect(trk.ids()).toEqual([1, 2]);
    trk.progress.delete(2);
    trk.progress.set(3, new Progress(1, 256, false));
    expect(trk.ids()).toEqual([1, 3]);
  });
});
