// Maintenance on a member: status, hashes and alarms as etcd's Maintenance service reports them. Alarms
// are replicated state the key-value store keeps; raising or clearing one goes through Raft.
import type { AlarmMember, AlarmType, StatusInfo } from './store-api.js';
import type { KvStore } from '../../kv/kv-store.js';
import type { MemberCore } from './member-core.js';
import type { Proposals } from './proposals.js';
import { NONE } from '../../raft/types.js';

/** The etcd version a member reports (status, /version): the release whose behaviour it matches. */
export const SERVER_VERSION = '3.4.23';

/** Only alarms proposed through alarm() are ever stored. */
export function alarmList(kv: Pick<KvStore, 'alarms'>): AlarmMember[] {
  return kv.alarms.map((a) => ({ memberId: a.memberId, alarm: a.alarm as AlarmType }));
}

export class Maintenance {
  constructor(
    private readonly c: MemberCore,
    private readonly proposals: Proposals,
  ) {}

  async status(): Promise<StatusInfo> {
    const st = this.c.node.status();
    return {
      version: SERVER_VERSION,
      dbSize: this.c.kv.size(),
      dbSizeInUse: this.c.kv.size(),
      leader: String(this.c.softState.lead),
      raftIndex: st.hardState.commit,
      raftTerm: st.hardState.term,
      raftAppliedIndex: st.applied,
      errors: alarmList(this.c.kv).map((a) => `memberID:${a.memberId} alarm:${a.alarm} `),
      isLearner: this.c.node.isLearner(),
    };
  }

  async hash(): Promise<{ hash: number }> {
    return { hash: (await this.c.kv.hashKV(0)).hash };
  }

  async hashKV(revision: number): Promise<{ hash: number; compactRevision: number }> {
    const h = await this.c.kv.hashKV(revision);
    // etcd's compactMainRev starts at -1, and HashKV reports it as is until the first compaction.
    return { hash: h.hash, compactRevision: h.compactRevision > 0 ? h.compactRevision : -1 };
  }

  async alarm(action: 'GET' | 'ACTIVATE' | 'DEACTIVATE', memberId: string, alarm: AlarmType): Promise<{ alarms: AlarmMember[] }> {
    if (action === 'GET') {
      const all = alarmList(this.c.kv);
      return { alarms: alarm === 'NONE' ? all : all.filter((a) => a.alarm === alarm) };
    }
    return this.proposals.proposeRequest<{ alarms: AlarmMember[] }>({ t: 'alarm', id: this.c.nextReqId(), action, memberId, alarm });
  }

  async health(): Promise<{ health: boolean; reason: string }> {
    if (this.c.softState.lead === NONE) return { health: false, reason: 'RAFT NO LEADER' };
    const alarms = alarmList(this.c.kv);
    if (alarms.length > 0) return { health: false, reason: `ALARM ${alarms.map((a) => a.alarm).join(',')}` };
    return { health: true, reason: '' };
  }
}
