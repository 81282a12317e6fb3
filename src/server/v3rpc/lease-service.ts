// etcdserverpb.Lease: grant, revoke, time-to-live and list map 1:1 onto the StoreApi; LeaseKeepAlive is a
// stream answered in request order, each renewal's header made before the renewal as etcd does (so a
// client never sees a keep-alive at a revision later than the lease's revocation).
import type { UntypedServiceImplementation } from '@grpc/grpc-js';
import type { EdgeContext } from './edge.js';
import { ETCD_PACKAGE, bidi, unary } from './edge.js';
import type { Long, WireHeader } from './etcd-wire.js';
import { currentHeader, num, wireHeader } from './etcd-wire.js';

const SERVICE = `${ETCD_PACKAGE}.Lease`;

export function leaseService(ctx: EdgeContext): UntypedServiceImplementation {
  const { store } = ctx;
  const current = (): WireHeader => currentHeader(store);
  return {
    LeaseGrant: unary<{ TTL: Long; ID: Long }, object>(
      ctx,
      SERVICE,
      'LeaseGrant',
      async (req, _tooLarge, who) => {
        // No permission is checked on a grant (etcd 3.4), but the token must be one the member knows.
        await who();
        const r = await store.leaseGrant(req.ID, num(req.TTL));
        return { header: current(), ID: r.id, TTL: r.ttl, error: '' };
      },
      { proposal: () => true },
    ),
    LeaseRevoke: unary<{ ID: Long }, object>(
      ctx,
      SERVICE,
      'LeaseRevoke',
      async (req, _tooLarge, who) => {
        const r = await store.leaseRevoke(req.ID, { auth: await who() });
        return { header: wireHeader(store.header(r.revision), r.revision) };
      },
      { proposal: () => true },
    ),
    LeaseTimeToLive: unary<{ ID: Long; keys: boolean }, object>(ctx, SERVICE, 'LeaseTimeToLive', async (req) => {
      const r = await store.leaseTimeToLive(req.ID, req.keys);
      return { header: current(), ID: r.id, TTL: r.ttl, grantedTTL: r.grantedTtl, keys: r.keys };
    }),
    LeaseLeases: unary<object, object>(ctx, SERVICE, 'LeaseLeases', async () => {
      const r = await store.leaseLeases();
      return { header: current(), leases: r.ids.map((id) => ({ ID: id })) };
    }),
    LeaseKeepAlive: bidi<{ ID: Long }, object>(ctx, SERVICE, 'LeaseKeepAlive', (out, session) => {
      // One renewal at a time, in arrival order, as etcd's receive loop does.
      let chain: Promise<void> = Promise.resolve();
      const renew = async (id: string): Promise<void> => {
        if (session.ended) return;
        const header = current();
        const r = await store.leaseKeepAlive(id);
        if (session.ended) return;
        const ok = out.write({ header, ID: id, TTL: r.ttl });
        session.tracker.sent();
        if (!ok) await new Promise<void>((resolve) => out.onRoom(resolve));
      };
      return {
        onRequest: (req) => {
          chain = chain.then(() => renew(req.ID)).catch((e: unknown) => session.finish(e));
        },
        // A half-close ends the call once the renewals already asked for are answered.
        onEnd: () => {
          chain = chain.then(() => session.finish());
        },
        onClose: () => undefined,
      };
    }),
  };
}
