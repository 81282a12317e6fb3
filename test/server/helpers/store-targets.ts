// The stores a client-level suite runs against, each started fresh for it: the client port over the fake
// StoreApi (single-node-store.ts: no Raft, writes apply at once), and a real `setpoint store` member (Raft,
// its WAL and LevelDB on disk) started by the harness. What a client sees must not depend on which.
import { StoreCluster } from '../../../src/harness/store-cluster.js';
import { startFixturePort } from './client-port-harness.js';

export interface StoreTarget {
  readonly endpoint: string;
  /** As Status and the etcd3 client spell them: decimal strings. */
  readonly clusterId: string;
  readonly memberId: string;
  readonly raftTerm: string;
  close(): Promise<void>;
}

export interface StoreTargetKind {
  readonly name: string;
  start(): Promise<StoreTarget>;
}

export const fakeStoreApi: StoreTargetKind = {
  name: 'the client port over a fake StoreApi',
  async start() {
    const fx = await startFixturePort();
    const s = fx.store;
    return { endpoint: fx.endpoint, clusterId: s.clusterId, memberId: s.memberId, raftTerm: String(s.raftTerm), close: () => fx.close() };
  },
};

export const realMember: StoreTargetKind = {
  name: 'a real setpoint store member',
  async start() {
    const c = await StoreCluster.start({ program: 'setpoint', size: 1, names: ['solo'], label: 'setpoint-solo-' });
    try {
      const st = await c.status('solo');
      return { endpoint: c.clientUrl('solo'), clusterId: st.clusterId, memberId: st.memberId, raftTerm: st.raftTerm.toString(), close: () => c.destroy() };
    } catch (e) {
      await c.destroy();
      throw e;
    }
  },
};

export const STORE_TARGETS: readonly StoreTargetKind[] = [fakeStoreApi, realMember];
