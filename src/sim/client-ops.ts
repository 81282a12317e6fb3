// Client requests as the simulation tracks them: writes (proposals) until the proposing node applies
// them, and ReadIndex reads from start to result.
import type { NodeId } from '../raft/types.js';
import type { PutOp } from './kv-machine.js';
import type { ReadFloor } from './read-checker.js';

export interface WriteOp {
  readonly id: number;
  readonly key: string;
  readonly value: string;
  readonly node: NodeId;
  readonly startTick: number;
}

export interface ReadOp {
  readonly id: number;
  readonly key: string;
  readonly node: NodeId;
  readonly startTick: number;
  /** What the read must observe, fixed when it started. */
  readonly floor: ReadFloor | undefined;
  /** Set once the node's ReadState for it arrives: serve when applied >= index. */
  index?: number;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export function encodeReadCtx(id: number): Uint8Array {
  return encoder.encode(`r${id}`);
}

/** The read id in a ReadState's context, or undefined for a context the simulation did not make. */
export function decodeReadCtx(ctx: Uint8Array): number | undefined {
  const s = decoder.decode(ctx);
  return s.startsWith('r') ? Number(s.slice(1)) : undefined;
}

export class ClientOps {
  proposed = 0;
  acked = 0;
  private nextId = 1;
  // Writes that may still be applied. A write whose proposal was lost stays here; that costs little.
  private readonly pending = new Map<number, WriteOp>();

  newWrite(node: NodeId, key: string, tick: number): WriteOp {
    const id = this.nextId++;
    const w: WriteOp = { id, key, value: `v${id}`, node, startTick: tick };
    this.pending.set(id, w);
    this.proposed++;
    return w;
  }

  /** The proposal was refused on the spot (no leader, transfer in progress): it will never apply. */
  refused(w: WriteOp): void {
    this.pending.delete(w.id);
  }

  /** True until the write is acknowledged (or refused); a lost proposal stays pending forever. */
  isPending(id: number): boolean {
    return this.pending.has(id);
  }

  newRead(node: NodeId, key: string, tick: number, floor: ReadFloor | undefined): ReadOp {
    return { id: this.nextId++, key, node, startTick: tick, floor };
  }

  /** A put was applied on `node`: if that node proposed it, the write is acknowledged now. */
  ackIfProposer(node: NodeId, op: PutOp): WriteOp | undefined {
    const w = this.pending.get(op.id);
    if (w === undefined || w.node !== node) return undefined;
    this.pending.delete(op.id);
    this.acked++;
    return w;
  }
}
