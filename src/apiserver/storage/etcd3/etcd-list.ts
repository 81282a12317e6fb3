// A list straight from the store, with Kubernetes' GetList semantics: resourceVersion unset is the latest
// (a quorum read), "0" any, N with Exact that revision, N with NotOlderThan (or without a limit) the latest
// if it has reached N; limit and continue page through one revision, doubling the page while the predicate
// filters objects out; remainingItemCount when nothing is filtered. A list without a limit is still read in
// pages of at most `pageSize` keys at one revision, so no single response grows with the resource.
import type { EtcdClient } from '../../../etcd-client/etcd-client.js';
import { EtcdClientError } from '../../../etcd-client/errors.js';
import { prefixEnd } from '../../../etcd-client/types.js';
import type { RangeResult } from '../../../etcd-client/types.js';
import { decodeContinue, encodeContinue } from '../continue-token.js';
import { badRequest, expired, tooLargeResourceVersion } from '../errors.js';
import type { ListOptions, ListResult, StoredObject } from '../interface.js';
import { parseResourceVersion } from '../resource-version.js';
import { decodeObject } from './codec.js';

/** Kubernetes' maxLimit: how far a filtered page may grow. */
const MAX_LIMIT = 10_000;

const LIST_EXPIRED = 'The resourceVersion for the provided list is too old.';
/** kube-apiserver's inconsistentContinue text (etcd3/errors.go). */
const CONTINUE_EXPIRED =
  'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, ' +
  'or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an ' +
  'inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.';

export async function listObjects(client: EtcdClient, prefix: string, opts: ListOptions, pageSize: number): Promise<ListResult> {
  const rv = parseResourceVersion(opts.resourceVersion);
  const limit = opts.limit !== undefined && opts.limit > 0 ? opts.limit : 0;
  const pred = opts.predicate;
  const keep = !pred || pred.empty ? () => true : (o: StoredObject) => pred.matches(o);
  let from = prefix;
  let withRev = 0;
  let continueKey: string | undefined;
  if (opts.continue) {
    const c = decodeContinue(opts.continue, prefix);
    if (rv !== undefined && rv !== 0) throw badRequest('specifying resource version is not allowed when using continue');
    from = continueKey = c.startKey;
    // -1: go on at the latest revision (the token an expired continue hands out).
    if (c.revision > 0) withRev = c.revision;
  } else if (rv !== undefined) {
    if (opts.resourceVersionMatch === 'Exact') withRev = rv;
    // The legacy form: a resourceVersion with a limit is an exact read.
    else if (opts.resourceVersionMatch === undefined && limit > 0 && rv > 0) withRev = rv;
  }

  const end = prefixEnd(prefix);
  const items: StoredObject[] = [];
  let fetch = limit > 0 ? Math.min(limit, pageSize) : pageSize;
  let last: RangeResult | undefined;
  let lastKey: string | undefined;
  let hasMore: boolean;
  /** Keys of the last response taken (kept or filtered out): its count minus these is what remains. */
  let taken: number;
  for (;;) {
    let r: RangeResult;
    try {
      r = await client.range(from, { rangeEnd: end, limit: fetch, revision: withRev });
    } catch (e) {
      if (e instanceof EtcdClientError && e.code === 'ETCD_MESSAGE_TOO_LARGE' && fetch > 1) {
        fetch = Math.ceil(fetch / 2);
        continue;
      }
      throw await interpretListError(e, client, withRev, continueKey, prefix);
    }
    if (!last && rv !== undefined && rv > r.revision && withRev === 0) throw tooLargeResourceVersion(rv, r.revision);
    last = r;
    hasMore = r.more;
    let full = false;
    taken = 0;
    for (const kv of r.kvs) {
      if (limit > 0 && items.length >= limit) {
        hasMore = full = true;
        break;
      }
      lastKey = kv.key.toString();
      taken++;
      const o = decodeObject(kv.key, kv.value, kv.modRevision);
      if (keep(o)) items.push(o);
    }
    if (!hasMore || full || (limit > 0 && items.length >= limit) || !lastKey) break;
    // A filtered page: ask for more at once next time.
    if (limit > 0 && fetch < MAX_LIMIT) fetch = Math.min(fetch * 2, MAX_LIMIT, pageSize);
    from = lastKey + '\0';
    if (withRev === 0) withRev = r.revision;
  }
  const revision = withRev !== 0 ? withRev : (last?.revision ?? 0);
  if (!(hasMore && limit > 0 && lastKey)) return { items, resourceVersion: String(revision) };
  const token = encodeContinue(lastKey + '\0', prefix, revision);
  // The store's count includes what the predicate dropped: only an unfiltered list can say what remains.
  if (pred && !pred.empty) return { items, resourceVersion: String(revision), continue: token };
  return { items, resourceVersion: String(revision), continue: token, remainingItemCount: Math.max(0, (last?.count ?? 0) - taken) };
}

async function interpretListError(e: unknown, client: EtcdClient, withRev: number, continueKey: string | undefined, prefix: string): Promise<unknown> {
  if (!(e instanceof EtcdClientError)) return e;
  if (e.code === 'ETCD_COMPACTED') {
    if (continueKey === undefined) return expired(LIST_EXPIRED);
    return expired(CONTINUE_EXPIRED, { continue: encodeContinue(continueKey, prefix, -1) });
  }
  if (e.code === 'ETCD_FUTURE_REV') {
    const current = (await client.range('compact_rev_key', { keysOnly: true })).revision;
    return tooLargeResourceVersion(withRev, current);
  }
  return e;
}
