// The member's PeerTransport in the simulation: Raft messages go to the simulated network; the
// member-to-member calls (lease forwarding, learner promotion) are outside what the simulation models.
import type { Message, NodeId } from '../../raft/types.js';
import type { PeerTransport } from '../../server/member/transport-api.js';

const notModelled = (what: string): Promise<never> => Promise.reject(new Error(`sim: ${what} is not modelled`));

export class SimTransport implements PeerTransport {
  constructor(private readonly deliver: (m: Message) => void) {}

  send(msgs: readonly Message[]): void {
    for (const m of msgs) this.deliver(m);
  }

  addPeer(): void {}
  updatePeer(): void {}
  removePeer(): void {}

  leaseKeepAlive(): Promise<{ ttl: number }> {
    return notModelled('lease keep-alive forwarding');
  }

  leaseTimeToLive(): Promise<{ ttl: number; grantedTtl: number; keys: Uint8Array[] }> {
    return notModelled('lease time-to-live forwarding');
  }

  memberPromote(): Promise<never> {
    return notModelled('learner promotion');
  }

  roundTripTimes(): ReadonlyMap<NodeId, number> {
    return new Map();
  }

  isActive(): boolean {
    return true;
  }

  activeSince(): number | undefined {
    return 0;
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
