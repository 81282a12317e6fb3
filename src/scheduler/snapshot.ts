// The nodes one scheduling cycle sees: NodeInfo clones in the cache's zone-interleaved order, stable for
// the cycle even though the cache changes as informer events and bindings arrive between cycles.

import type { NodeInfo } from './node-info.js';

export class Snapshot {
  readonly list: NodeInfo[];
  readonly byName: Map<string, NodeInfo>;
  private readonly index: Map<string, number>;

  constructor(list: NodeInfo[] = []) {
    this.list = list;
    this.byName = new Map(list.map((n) => [n.name, n]));
    this.index = new Map(list.map((n, i) => [n.name, i]));
  }

  get(name: string): NodeInfo | undefined {
    return this.byName.get(name);
  }

  get numNodes(): number {
    return this.list.length;
  }

  /** Replaces a node's info in place (an update from the cache); unknown nodes are ignored. */
  replace(ni: NodeInfo): void {
    const i = this.index.get(ni.name);
    if (i === undefined) return;
    this.byName.set(ni.name, ni);
    this.list[i] = ni;
  }
}
