// A broken invariant found by the simulation. Thrown from the checks and caught by runSeed, which turns it
// into a report with the seed, a replay command and the trace tail.

export type ViolationKind =
  | 'election-safety'
  | 'vote-changed'
  | 'leader-append-only'
  | 'log-matching'
  | 'leader-completeness'
  | 'commit-previous-term'
  | 'state-machine-safety'
  | 'apply-order'
  | 'hard-state-regression'
  | 'commit-beyond-log'
  | 'linearizable-read'
  | 'ack-not-durable'
  | 'ack-wrong-entry'
  | 'lease-revoked-early'
  | 'liveness'
  | 'convergence'
  | 'core-error';

export class SimViolation extends Error {
  readonly kind: ViolationKind;

  constructor(kind: ViolationKind, message: string) {
    super(`${kind}: ${message}`);
    this.name = 'SimViolation';
    this.kind = kind;
  }
}
