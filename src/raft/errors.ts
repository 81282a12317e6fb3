// Errors the core reports to its caller. Each carries a stable `code`; messages may change, codes will not.
import type { NodeId } from './types.js';

export type RaftErrorCode =
  | 'RAFT_COMPACTED' // requested index is below the first available one
  | 'RAFT_UNAVAILABLE' // requested index is above the last one
  | 'RAFT_SNAPSHOT_OUT_OF_DATE'
  | 'RAFT_SNAPSHOT_TEMPORARILY_UNAVAILABLE'
  | 'RAFT_PROPOSAL_DROPPED' // no leader, leader transfer in progress, or forwarding disabled
  | 'RAFT_STEP_LOCAL_MSG'
  | 'RAFT_STEP_PEER_NOT_FOUND'
  | 'RAFT_INVARIANT'; // a broken invariant: a bug, never an expected condition

export class RaftError extends Error {
  readonly code: RaftErrorCode;
  /** For RAFT_PROPOSAL_DROPPED: the leader this node knows of (0n if none), so callers can redirect. */
  readonly leaderHint: NodeId;

  constructor(code: RaftErrorCode, message: string, leaderHint: NodeId = 0n) {
    super(message);
    this.name = 'RaftError';
    this.code = code;
    this.leaderHint = leaderHint;
  }
}

export const errCompacted = (): RaftError =>
  new RaftError('RAFT_COMPACTED', 'raft: requested index is unavailable due to compaction');
export const errUnavailable = (): RaftError =>
  new RaftError('RAFT_UNAVAILABLE', 'raft: requested entry at index is unavailable');
export const errSnapOutOfDate = (): RaftError =>
  new RaftError('RAFT_SNAPSHOT_OUT_OF_DATE', 'raft: requested index is older than the existing snapshot');
export const errSnapshotTemporarilyUnavailable = (): RaftError =>
  new RaftError('RAFT_SNAPSHOT_TEMPORARILY_UNAVAILABLE', 'raft: snapshot is temporarily unavailable');
export const errProposalDropped = (reason: string, leaderHint: NodeId): RaftError =>
  new RaftError('RAFT_PROPOSAL_DROPPED', `raft proposal dropped: ${reason}`, leaderHint);

/** Fails loudly when an invariant breaks; the simulation relies on these throwing. */
export function invariant(cond: boolean, what: string): asserts cond {
  if (!cond) throw new RaftError('RAFT_INVARIANT', `raft invariant violated: ${what}`);
}
