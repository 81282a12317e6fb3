// @peculiar/x509 resolves its parts through tsyringe, which refuses to load unless the Reflect metadata
// API exists (the `reflect-metadata` package normally supplies it). tsyringe only stores and reads
// metadata through it, so this minimal stand-in is enough. Import it before @peculiar/x509.
type Store = Map<unknown, unknown>;
const stores = new WeakMap<object, Store>();

interface ReflectMetadata {
  defineMetadata?(key: unknown, value: unknown, target: object): void;
  getOwnMetadata?(key: unknown, target: object): unknown;
  getMetadata?(key: unknown, target: object): unknown;
}

const R = Reflect as unknown as ReflectMetadata;
if (typeof R.getMetadata !== 'function') {
  R.defineMetadata = (key, value, target) => {
    let s = stores.get(target);
    if (!s) {
      s = new Map();
      stores.set(target, s);
    }
    s.set(key, value);
  };
  R.getOwnMetadata = (key, target) => stores.get(target)?.get(key);
  R.getMetadata = (key, target) => {
    // Along the prototype chain, as reflect-metadata does.
    for (let t: object | null = target; t !== null; t = Object.getPrototypeOf(t) as object | null) {
      const s = stores.get(t);
      if (s?.has(key)) return s.get(key);
    }
    return undefined;
  };
}

export {};
