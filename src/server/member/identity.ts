// Who a member is at start: from disk on restart, from --initial-cluster for a new cluster (writing the
// bootstrap snapshot every founding member shares), or from the peers when joining an existing cluster.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { NodeId } from '../../raft/types.js';
import type { DurableRaftStorage } from '../../storage/raft-storage.js';
import type { MemberConfig } from './member-config.js';
import type { MemberIdentity } from './membership.js';
import { NONE } from '../../raft/types.js';
import { Membership, decodeIdentity, encodeIdentity, memberIdFor } from './membership.js';

/** What deciding a member's identity reads of its configuration (a snapshot restore gives the same). */
export type IdentityConfig = Pick<MemberConfig, 'name' | 'initialCluster' | 'initialClusterState' | 'initialClusterToken' | 'fetchMembership'>;

export async function initIdentity(cfg: IdentityConfig, memberDir: string, storage: DurableRaftStorage): Promise<{ memberId: NodeId; membership: Membership }> {
  const idFile = join(memberDir, 'identity.json');
  let saved: MemberIdentity | undefined;
  try {
    saved = decodeIdentity(await readFile(idFile, 'utf8'));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw new Error(`${idFile}: unreadable member identity (${(e as Error).message})`, { cause: e });
  }
  const snap = storage.snapshot();
  if (saved) {
    const membership = snap.metadata.index > 0 && snap.data.length > 0 ? Membership.decode(snap.data) : new Membership(saved.clusterId);
    return { memberId: saved.memberId, membership };
  }
  const self = cfg.initialCluster.get(cfg.name);
  if (!self) throw new Error(`--initial-cluster has no entry for this member's name "${cfg.name}"`);
  let memberId: NodeId;
  let membership: Membership;
  if (cfg.initialClusterState === 'new') {
    membership = Membership.fromInitialCluster(new Map([...cfg.initialCluster].map(([n, u]) => [n, [...u]])), cfg.initialClusterToken);
    memberId = memberIdFor(self, cfg.initialClusterToken);
    const ids = membership.voters();
    // Every founding member writes the same bootstrap snapshot: index 1, term 1, all of them voters.
    await storage.save({
      snapshot: { metadata: { index: 1, term: 1, confState: { voters: ids, learners: [] } }, data: membership.encode() },
      entries: [],
      hardState: { term: 1, vote: NONE, commit: 1 },
      mustSync: true,
    });
  } else {
    if (!cfg.fetchMembership) throw new Error('joining an existing cluster needs a way to reach its members');
    const others = [...cfg.initialCluster].filter(([n]) => n !== cfg.name).flatMap(([, u]) => u);
    const info = Membership.decode(await cfg.fetchMembership(others));
    const me = [...info.members.values()].find((m) => m.peerURLs.some((u) => self.includes(u)));
    if (!me) throw new Error(`the cluster has no member with peer URLs ${self.join(',')}: add it with "member add" first`);
    memberId = me.id;
    membership = info;
  }
  await writeFile(idFile, encodeIdentity({ memberId, clusterId: membership.clusterId }));
  return { memberId, membership };
}
