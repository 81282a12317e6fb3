// The nodes one scheduling cycle sees: NodeInfo clones in the cache's zone-interleaved order, stable for
// the cycle even though the cache changes as informer events and bindings arrive between cycles.

import type { NodeInfo } from './node-info.js';

export class Snapshot {
  readonly list: NodeInfo[];
  readonly byName: Map<string, NodeInfo>;

  constructor(list: NodeInfo[] = []) {
    this.list = list;
    this.byName = new Map(list.map((n) => [n.name, n]));
  }

  get(name: string): NodeInfo | undefined {
    return this.byName.get(name);
  }

  get numNodes(): number {
    return this.list.length;
  }

  /** Replaces one node's info (a simulation in preemption, an update from the cache). */
  replace(ni: NodeInfo): void {
    const old = this.byName.get(ni.name);
    this.byName.set(ni.name, ni);
    if (old !== undefined) {
      const i = this.list.indexOf(old);
      if (i >= 0) this.list[i] = ni;
    }
  }
}
