// structured-merge-diff's Updater for one kind at one version: the bookkeeping of who owns which
// fields. An update gives its manager every field it added or changed and takes those fields from the
// others (never a conflict); an apply merges the configuration onto the live object, removes what the
// manager applied before and no longer applies (unless someone else owns it), and fails with the
// conflicting fields of other managers unless forced.

import { FieldSet } from './field-set.js';
import type { Path } from './path-element.js';
import { valuesEqual } from './typed.js';
import type { Typed } from './typed.js';
import type { Schema } from '../schema/schema.js';

export interface VersionedSet {
  readonly set: FieldSet;
  readonly apiVersion: string;
  /** Whether the fields were set by an Apply (true) or an Update. */
  readonly applied: boolean;
}

/** Managers by identifier (the JSON of their manager, operation, apiVersion and subresource). */
export type ManagedFields = Map<string, VersionedSet>;

export interface Conflict {
  readonly manager: string;
  readonly path: Path;
}

export class ConflictsError extends Error {
  readonly code = 'SSA_CONFLICTS';
  readonly conflicts: readonly Conflict[];
  constructor(conflicts: readonly Conflict[]) {
    super(`${conflicts.length} conflicts`);
    this.name = 'ConflictsError';
    this.conflicts = conflicts;
  }
}

export class Updater {
  readonly #typed: Typed;
  readonly #schema: Schema;
  /** Fields the strategy resets (status on the main resource, for example): never owned through it. */
  readonly #ignore: FieldSet | undefined;

  constructor(typed: Typed, schema: Schema, ignore?: FieldSet) {
    this.#typed = typed;
    this.#schema = schema;
    this.#ignore = ignore;
  }

  #filter(s: FieldSet): FieldSet {
    return this.#ignore === undefined ? s : s.recursiveDifference(this.#ignore);
  }

  // The shared step of updates and applies: what changed from old to new, who that conflicts with, and
  // the removal of removed fields from everyone.
  #update(oldObj: unknown, newObj: unknown, managers: ManagedFields, workflow: string, force: boolean): { managers: ManagedFields; added: FieldSet; modified: FieldSet; removed: FieldSet } {
    const c = this.#typed.compare(this.#schema, oldObj, newObj);
    const modified = this.#filter(c.modified);
    const added = this.#filter(c.added);
    const removed = this.#filter(c.removed);
    const changed = modified.union(added);
    const conflicts = new Map<string, FieldSet>();
    for (const [manager, vs] of managers) {
      if (manager === workflow) continue;
      const cs = vs.set.intersection(changed);
      if (!cs.isEmpty()) conflicts.set(manager, cs);
    }
    if (!force && conflicts.size > 0) {
      const list: Conflict[] = [];
      for (const [manager, cs] of conflicts) for (const path of cs.paths()) list.push({ manager, path });
      throw new ConflictsError(list);
    }
    const out: ManagedFields = new Map();
    for (const [manager, vs] of managers) {
      let set = vs.set;
      if (manager !== workflow) {
        const cs = conflicts.get(manager);
        if (cs !== undefined) set = set.difference(cs);
        if (!removed.isEmpty()) set = set.difference(removed);
      }
      if (!set.isEmpty()) out.set(manager, set === vs.set ? vs : { ...vs, set });
    }
    return { managers: out, added, modified, removed };
  }

  /** An update (create, PUT, non-apply PATCH) by `manager`: it takes every field it changed. */
  update(live: unknown, next: unknown, apiVersion: string, managers: ManagedFields, manager: string): ManagedFields {
    const r = this.#update(live, next, managers, manager, true);
    const previous = managers.get(manager)?.set ?? FieldSet.empty();
    const own = this.#filter(previous.difference(r.removed).union(r.modified).union(r.added));
    const out = new Map(r.managers);
    if (own.isEmpty()) out.delete(manager);
    else out.set(manager, { set: own, apiVersion, applied: false });
    return out;
  }

  /**
   * An apply of `config` by `manager`. Returns the new object, or undefined when the apply changes
   * nothing (the managed fields may still change).
   */
  apply(live: unknown, config: unknown, apiVersion: string, managers: ManagedFields, manager: string, force: boolean): { object: unknown; managers: ManagedFields } {
    let merged = this.#typed.merge(this.#schema, live, config);
    const lastSet = managers.get(manager);
    const set = this.#filter(this.#typed.toFieldSet(this.#schema, config));
    const withApplier: ManagedFields = new Map(managers);
    withApplier.set(manager, { set, apiVersion, applied: true });
    merged = this.#prune(merged, withApplier, lastSet);
    const r = this.#update(live, merged, withApplier, manager, force);
    return { object: valuesEqual(live, merged) ? undefined : merged, managers: r.managers };
  }

  // Removes from the merged object what the applier owned before and no longer applies, keeping what
  // other managers own and what the removal would leave dangling.
  #prune(merged: unknown, managers: ManagedFields, lastSet: VersionedSet | undefined): unknown {
    if (lastSet === undefined || lastSet.set.isEmpty()) return merged;
    const t = this.#typed;
    const s = this.#schema;
    const ensure = (x: FieldSet): FieldSet => t.ensureNamedFieldsAreMembers(s, x);
    let pruned = t.removeItems(s, merged, ensure(lastSet.set));
    // addBackOwnedItems: what any manager owns comes back.
    let managed = FieldSet.empty();
    for (const vs of managers.values()) managed = managed.union(vs.set);
    const mergedSet = ensure(t.toFieldSet(s, merged));
    const prunedSet = ensure(t.toFieldSet(s, pruned));
    pruned = t.removeItems(s, merged, mergedSet.difference(prunedSet.union(ensure(managed))));
    // addBackDanglingItems: only what the last applied set named may go.
    const prunedSet2 = ensure(t.toFieldSet(s, pruned));
    return t.removeItems(s, merged, mergedSet.difference(prunedSet2).intersection(ensure(lastSet.set)));
  }
}
