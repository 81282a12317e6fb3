// Objects, predicates and watch readers for the storage tests.
import { randomUUID } from 'node:crypto';
import type { Predicate, StoredObject, Watch, WatchEvent } from '../../../../src/apiserver/storage/interface.js';
import { StorageError } from '../../../../src/apiserver/storage/interface.js';

export function pod(name: string, labels: Record<string, string> = {}, extra: Record<string, unknown> = {}): StoredObject {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default', uid: randomUUID(), labels }, spec: { nodeName: '' }, ...extra };
}

/** label=value for every pair given (an equality selector). */
export function labelled(sel: Record<string, string>): Predicate {
  return {
    empty: false,
    matches: (o) => {
      const labels = (o.metadata['labels'] ?? {}) as Record<string, string>;
      return Object.entries(sel).every(([k, v]) => labels[k] === v);
    },
  };
}

export function withLabels(o: StoredObject, labels: Record<string, string>): StoredObject {
  return { ...o, metadata: { ...o.metadata, labels } };
}

export async function storageError(p: Promise<unknown>): Promise<StorageError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof StorageError) return e;
    throw e;
  }
  throw new Error('expected a StorageError');
}

export interface Seen {
  readonly type: string;
  readonly name: string | undefined;
  readonly rv: string | undefined;
  readonly object: StoredObject;
}

/** Reads a watch in the background; `until` waits for a condition on what arrived so far. */
export class WatchReader {
  readonly seen: Seen[] = [];
  ended = false;
  private readonly done: Promise<void>;

  constructor(readonly watch: Watch) {
    this.done = (async () => {
      for await (const e of watch as AsyncIterable<WatchEvent>) {
        this.seen.push({ type: e.type, name: e.object.metadata.name, rv: e.object.metadata.resourceVersion, object: e.object });
      }
      this.ended = true;
    })();
  }

  async until(cond: (seen: Seen[]) => boolean, what: string, timeoutMs = 30_000): Promise<Seen[]> {
    const deadline = Date.now() + timeoutMs;
    while (!cond(this.seen)) {
      if (Date.now() > deadline) throw new Error(`watch: timed out waiting for ${what}; saw ${JSON.stringify(this.seen.map((s) => [s.type, s.name, s.rv]))}`);
      await new Promise((r) => setTimeout(r, 10));
    }
    return this.seen;
  }

  /** The events other than BOOKMARK, as [type, name]. */
  changes(): [string, string | undefined][] {
    return this.seen.filter((s) => s.type !== 'BOOKMARK').map((s) => [s.type, s.name]);
  }

  async stop(): Promise<void> {
    this.watch.stop();
    await this.done;
  }
}

export async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
