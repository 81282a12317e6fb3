// field.Path: where in an object a validation error is, printed as Kubernetes prints it
// ("spec.containers[0].image", "metadata.labels[app]"). Immutable; a child shares its parent.

export class FieldPath {
  readonly #parent: FieldPath | undefined;
  // Either a field name, or (when #name is undefined) a subscript: an index or a map key.
  readonly #name: string | undefined;
  readonly #index: string | undefined;
  #text: string | undefined;

  private constructor(parent: FieldPath | undefined, name: string | undefined, index: string | undefined) {
    this.#parent = parent;
    this.#name = name;
    this.#index = index;
  }

  /** A path from the root: FieldPath.of('spec', 'containers'). */
  static of(name: string, ...more: string[]): FieldPath {
    let p = new FieldPath(undefined, name, undefined);
    for (const n of more) p = new FieldPath(p, n, undefined);
    return p;
  }

  child(name: string, ...more: string[]): FieldPath {
    let p = new FieldPath(this, name, undefined);
    for (const n of more) p = new FieldPath(p, n, undefined);
    return p;
  }

  index(i: number): FieldPath {
    return new FieldPath(this, undefined, String(i));
  }

  key(k: string): FieldPath {
    return new FieldPath(this, undefined, k);
  }

  toString(): string {
    if (this.#text !== undefined) return this.#text;
    const head = this.#parent?.toString();
    let text: string;
    if (this.#name !== undefined) text = head === undefined || this.#name === '' ? `${head ?? ''}${this.#name}` : `${head}.${this.#name}`;
    else text = `${head ?? ''}[${this.#index ?? ''}]`;
    this.#text = text;
    return text;
  }
}

/** Prints an optional path as Go prints a nil *field.Path. */
export function pathString(p: FieldPath | undefined): string {
  return p === undefined ? '<nil>' : p.toString();
}
