// The simulation's key-value state under the member's real Applier (behind its ApplyStore seam): puts
// only, each cell remembering the log index that wrote it, which is what the read checker compares. The
// revision a put answers with is its log index, so an acknowledged write tells the client where it is.
// Like SimNode's state machine, each apply is durable on its own (a store that writes its applied index
// with its data), so it survives a crash while the Raft log's unsynced tail does not.
import type { KvStore } from '../../kv/kv-store.js';
import type { PutRequest, PutResponse } from '../../kv/types.js';
import type { ApplyStore } from '../../server/member/applier.js';
import type { KvCell } from '../kv-machine.js';
import { cellsDigest } from '../kv-machine.js';
import { HASH_SEED } from '../hash.js';

const decoder = new TextDecoder();

function unsupported(what: string): never {
  throw new Error(`sim: ${what} is not modelled by the member-loop simulation (its workload only puts and reads)`);
}

export class SimKv implements ApplyStore {
  /** The bootstrap snapshot (index 1) is applied everywhere. */
  consistentIndex = 1;
  currentRev = 1;
  alarms: KvStore['alarms'] = [];
  /** Chained over every applied entry, for the safety checker's state-machine comparison. */
  applyHash = HASH_SEED;
  private readonly cells = new Map<string, KvCell>();

  get(key: string): KvCell | undefined {
    return this.cells.get(key);
  }

  markApplied(index: number): void {
    this.consistentIndex = index;
  }

  setAlarms(alarms: KvStore['alarms']): void {
    this.alarms = alarms;
  }

  canPutNow(): boolean {
    return true;
  }

  putNow(req: PutRequest, index?: number): PutResponse {
    if (index === undefined) return unsupported('a put outside the log');
    this.cells.set(decoder.decode(req.key), { value: decoder.decode(req.value ?? new Uint8Array(0)), index });
    this.consistentIndex = index;
    this.currentRev = index;
    return { header: { revision: index } };
  }

  put(req: PutRequest, index?: number): Promise<PutResponse> {
    return Promise.resolve(this.putNow(req, index));
  }

  canTxnNow(): boolean {
    return false;
  }

  txnNow(): never {
    return unsupported('txn');
  }

  txn(): never {
    return unsupported('txn');
  }

  deleteRange(): never {
    return unsupported('deleteRange');
  }

  compact(): never {
    return unsupported('compact');
  }

  leaseGrant(): never {
    return unsupported('leaseGrant');
  }

  leaseRevoke(): never {
    return unsupported('leaseRevoke');
  }

  /** A digest of the contents, to compare replicas once converged. */
  digest(): number {
    return cellsDigest(this.cells);
  }
}
