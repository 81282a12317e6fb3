// client-go's EventCorrelator (tools/record/events_cache.go), as pure logic over a Clock: an event that
// repeats one already written (same source, object, type, reason and message) becomes a PATCH of that
// Event's count and lastTimestamp; more than 10 similar events (all the same but the message) in 10 minutes
// become one "(combined from similar events): …" Event that counts on; and a token bucket per source and
// object (burst 25, one more every 5 minutes) drops the rest. Caches are LRUs of 4096 keys, as client-go's.
import type { Clock } from './clock.js';
import type { KubeObject } from './kube-object.js';
import { TokenBucket } from './rate-limiter.js';

export interface CoreEvent extends KubeObject {
  metadata: { name: string; namespace: string; resourceVersion?: string };
  involvedObject: { kind?: string; apiVersion?: string; name?: string; namespace?: string; uid?: string; resourceVersion?: string; fieldPath?: string };
  reason: string;
  message: string;
  type: string;
  source: { component: string; host?: string };
  firstTimestamp: string;
  lastTimestamp: string;
  count: number;
  reportingComponent?: string;
  reportingInstance?: string;
}

export interface EventPatch {
  readonly count: number;
  readonly lastTimestamp: string;
  readonly message: string;
}

export type CorrelateResult = { readonly skip: true } | { readonly skip: false; readonly event: CoreEvent; readonly patch?: EventPatch };

export interface CorrelatorOptions {
  readonly clock: Clock;
  /** Similar events within maxIntervalMs before they are combined (client-go: 10). */
  readonly maxEvents?: number;
  readonly maxIntervalMs?: number;
  /** The spam filter's bucket per source and object (client-go: burst 25, 1 per 5 minutes). */
  readonly spamBurst?: number;
  readonly spamQps?: number;
  readonly cacheSize?: number;
}

/** A Map used as an LRU: reads move a key to the back, writes past the size drop the front. */
class Lru<V> {
  private readonly m = new Map<string, V>();
  constructor(private readonly size: number) {}
  get(k: string): V | undefined {
    const v = this.m.get(k);
    if (v !== undefined) {
      this.m.delete(k);
      this.m.set(k, v);
    }
    return v;
  }
  set(k: string, v: V): void {
    this.m.delete(k);
    this.m.set(k, v);
    if (this.m.size > this.size) this.m.delete(this.m.keys().next().value as string);
  }
}

interface Observed {
  readonly count: number;
  readonly firstTimestamp: string;
  readonly name: string;
  readonly resourceVersion: string;
}

interface AggregateRecord {
  readonly localKeys: Set<string>;
  lastMs: number;
}

const COMBINED_PREFIX = '(combined from similar events): ';

function objectParts(e: CoreEvent): string[] {
  const o = e.involvedObject;
  return [e.source.component, e.source.host ?? '', o.kind ?? '', o.namespace ?? '', o.name ?? '', o.uid ?? '', o.apiVersion ?? ''];
}

/** getEventKey: everything that makes two events the same event. */
function eventKey(e: CoreEvent): string {
  return JSON.stringify([...objectParts(e), e.type, e.reason, e.message]);
}

/** EventAggregatorByReasonFunc: the same but for the message, which is the local key. */
function aggregateKey(e: CoreEvent): string {
  return JSON.stringify([...objectParts(e), e.type, e.reason, e.reportingComponent ?? '', e.reportingInstance ?? '']);
}

/** getSpamKey: the source and the object. */
function spamKey(e: CoreEvent): string {
  return JSON.stringify(objectParts(e));
}

export class EventCorrelator {
  private readonly clock: Clock;
  private readonly maxEvents: number;
  private readonly maxIntervalMs: number;
  private readonly aggregates: Lru<AggregateRecord>;
  private readonly observed: Lru<Observed>;
  private readonly spam: Lru<TokenBucket>;

  constructor(private readonly opts: CorrelatorOptions) {
    this.clock = opts.clock;
    this.maxEvents = opts.maxEvents ?? 10;
    this.maxIntervalMs = opts.maxIntervalMs ?? 600_000;
    const size = opts.cacheSize ?? 4096;
    this.aggregates = new Lru(size);
    this.observed = new Lru(size);
    this.spam = new Lru(size);
  }

  /** EventCorrelate: aggregate, then count repeats, then filter spam. `name` is a fresh Event's name. */
  correlate(event: CoreEvent, freshName: () => string): CorrelateResult {
    const { event: aggregated, key } = this.aggregate(event, freshName);
    const { event: out, patch } = this.observe(aggregated, key);
    if (this.isSpam(out)) return { skip: true };
    return patch !== undefined ? { skip: false, event: out, patch } : { skip: false, event: out };
  }

  private aggregate(event: CoreEvent, freshName: () => string): { event: CoreEvent; key: string } {
    const nowMs = this.clock.now();
    const akey = aggregateKey(event);
    let rec = this.aggregates.get(akey);
    if (rec === undefined || nowMs - rec.lastMs > this.maxIntervalMs) rec = { localKeys: new Set(), lastMs: nowMs };
    rec.localKeys.add(event.message);
    rec.lastMs = nowMs;
    this.aggregates.set(akey, rec);
    if (rec.localKeys.size < this.maxEvents) return { event, key: eventKey(event) };
    // Keep the set bounded (client-go's PopAny).
    const any = rec.localKeys.values().next().value;
    if (any !== undefined) rec.localKeys.delete(any);
    const combined: CoreEvent = {
      ...event,
      metadata: { name: freshName(), namespace: event.metadata.namespace },
      message: `${COMBINED_PREFIX}${event.message}`,
      count: 1,
      firstTimestamp: event.lastTimestamp,
    };
    return { event: combined, key: akey };
  }

  /** eventObserve: a key seen before makes the event a repeat of the stored one (count+1, a patch). */
  private observe(event: CoreEvent, key: string): { event: CoreEvent; patch?: EventPatch } {
    const last = this.observed.get(key);
    if (last === undefined) {
      this.observed.set(key, { count: event.count, firstTimestamp: event.firstTimestamp, name: event.metadata.name, resourceVersion: '' });
      return { event };
    }
    const repeat: CoreEvent = {
      ...event,
      count: last.count + 1,
      firstTimestamp: last.firstTimestamp,
      metadata: { ...event.metadata, name: last.name, ...(last.resourceVersion !== '' ? { resourceVersion: last.resourceVersion } : {}) },
    };
    this.observed.set(key, { ...last, count: repeat.count });
    return { event: repeat, patch: { count: repeat.count, lastTimestamp: repeat.lastTimestamp, message: repeat.message } };
  }

  private isSpam(event: CoreEvent): boolean {
    const k = spamKey(event);
    let bucket = this.spam.get(k);
    if (bucket === undefined) {
      bucket = new TokenBucket(this.opts.spamQps ?? 1 / 300, this.opts.spamBurst ?? 25, this.clock);
      this.spam.set(k, bucket);
    }
    return !bucket.tryTake();
  }

  /** UpdateState: what the server stored (its name, count and resourceVersion) is what repeats build on. */
  updateState(stored: CoreEvent): void {
    const keys = [eventKey(stored)];
    if (stored.message.startsWith(COMBINED_PREFIX)) keys.push(aggregateKey(stored));
    for (const key of keys) {
      const last = this.observed.get(key);
      if (last !== undefined && last.name !== stored.metadata.name) continue;
      this.observed.set(key, { count: stored.count, firstTimestamp: stored.firstTimestamp, name: stored.metadata.name, resourceVersion: stored.metadata.resourceVersion ?? '' });
    }
  }
}
