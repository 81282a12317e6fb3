// The cache's node order: nodes grouped by zone (region + zone labels) and listed round-robin across
// zones, as Kubernetes' nodeTree does, so a cycle that stops after enough feasible nodes still sees
// every zone.

import type { Node } from './api-types.js';
import { labelTopologyRegion, labelTopologyZone } from './api-types.js';

export function zoneKey(node: Node): string {
  const l = node.metadata.labels ?? {};
  const region = l[labelTopologyRegion] ?? '';
  const zone = l[labelTopologyZone] ?? '';
  return region === '' && zone === '' ? '' : `${region}:\x00:${zone}`;
}

export class NodeTree {
  private readonly zones = new Map<string, string[]>();
  private readonly zoneOf = new Map<string, string>();

  add(node: Node): void {
    const name = node.metadata.name;
    const z = zoneKey(node);
    const old = this.zoneOf.get(name);
    if (old === z) return;
    if (old !== undefined) this.remove(name);
    let list = this.zones.get(z);
    if (list === undefined) this.zones.set(z, (list = []));
    list.push(name);
    this.zoneOf.set(name, z);
  }

  remove(name: string): void {
    const z = this.zoneOf.get(name);
    if (z === undefined) return;
    this.zoneOf.delete(name);
    const list = this.zones.get(z) ?? [];
    const i = list.indexOf(name);
    if (i >= 0) list.splice(i, 1);
    if (list.length === 0) this.zones.delete(z);
  }

  get size(): number {
    return this.zoneOf.size;
  }

  /** The names, one per zone in turn. */
  list(): string[] {
    const lists = [...this.zones.values()];
    const out: string[] = [];
    for (let i = 0; out.length < this.zoneOf.size; i++) {
      for (const l of lists) {
        const n = l[i];
        if (n !== undefined) out.push(n);
      }
    }
    return out;
  }
}
