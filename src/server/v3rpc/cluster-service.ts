// etcdserverpb.Cluster: membership calls, 1:1 onto the StoreApi. Member ids are uint64 and stay decimal
// strings end to end, so ids above 2^53 survive.
import type { UntypedServiceImplementation } from '@grpc/grpc-js';
import type { MemberInfo } from '../member/store-api.js';
import type { EdgeContext } from './edge.js';
import { ETCD_PACKAGE, unary } from './edge.js';
import type { Long, WireHeader } from './etcd-wire.js';
import { wireHeader } from './etcd-wire.js';

const SERVICE = `${ETCD_PACKAGE}.Cluster`;

function wireMember(m: MemberInfo): object {
  return { ID: m.id, name: m.name, peerURLs: m.peerURLs, clientURLs: m.clientURLs, isLearner: m.isLearner };
}

/** Changing the membership needs the root role while auth is on (etcd's checkMembershipOperationPermission); listing it does not. */
export function clusterService(ctx: EdgeContext): UntypedServiceImplementation {
  const { store } = ctx;
  // etcd's ClusterServer.header() sets cluster, member and term but no revision: membership is not
  // part of the key-value history.
  const current = (): WireHeader => wireHeader(store.header(), 0);
  const members = (ms: readonly MemberInfo[]) => ms.map(wireMember);
  return {
    MemberAdd: unary<{ peerURLs: string[]; isLearner: boolean }, object>(ctx, SERVICE, 'MemberAdd', async (req, _tooLarge, who) => {
      store.auth?.checkAdmin(await who());
      const r = await store.memberAdd(req.peerURLs, req.isLearner);
      return { header: current(), member: wireMember(r.member), members: members(r.members) };
    }),
    MemberRemove: unary<{ ID: Long }, object>(ctx, SERVICE, 'MemberRemove', async (req, _tooLarge, who) => {
      store.auth?.checkAdmin(await who());
      const r = await store.memberRemove(req.ID);
      return { header: current(), members: members(r.members) };
    }),
    MemberUpdate: unary<{ ID: Long; peerURLs: string[] }, object>(ctx, SERVICE, 'MemberUpdate', async (req, _tooLarge, who) => {
      store.auth?.checkAdmin(await who());
      const r = await store.memberUpdate(req.ID, req.peerURLs);
      return { header: current(), members: members(r.members) };
    }),
    MemberList: unary<object, object>(ctx, SERVICE, 'MemberList', async () => {
      const r = await store.memberList();
      return { header: current(), members: members(r.members) };
    }),
    MemberPromote: unary<{ ID: Long }, object>(ctx, SERVICE, 'MemberPromote', async (req, _tooLarge, who) => {
      store.auth?.checkAdmin(await who());
      const r = await store.memberPromote(req.ID);
      return { header: current(), members: members(r.members) };
    }),
  };
}
