// etcd 3.4's auth buckets (auth/store.go), both ways: the auth state the store keeps (AuthState.snapshot(),
// opaque to the key-value layer and described here by its shape) as the records of the `auth`, `authUsers`
// and `authRoles` buckets of an etcd snapshot file, and those records read back. The layouts are etcd's:
//   auth       authEnabled → one byte, 1 (written once auth is on), authRevision → 8 bytes big-endian
//   authUsers  name → authpb.User {1 name, 2 password (the bcrypt hash as it is), 3 roles (repeated, sorted),
//              4 options {1 no_password}} (etcd 3.4 always writes options, empty unless no_password)
//   authRoles  name → authpb.Role {1 name, 2 keyPermission (repeated, sorted by key):
//              authpb.Permission {1 permType (READ 0, WRITE 1, READWRITE 2), 2 key, 3 range_end}}
// Reading is strict: a record etcd could not have written is an AuthRecordError naming it, never a guess.
import { WIRE_LEN, WIRE_VARINT, Writer, bytesFieldLen, intFieldLen, varintLength, varintValue, wireFields, writeBytes, writeInt } from './pb.js';

export type AuthPermType = 'READ' | 'WRITE' | 'READWRITE';

/** The auth state as AuthState.snapshot() gives it (src/server/auth/auth-state.ts), key bytes as Uint8Array. */
export interface AuthImage {
  readonly enabled: boolean;
  readonly revision: number;
  readonly users: readonly { readonly name: string; readonly password: string; readonly roles: readonly string[]; readonly noPassword: boolean }[];
  readonly roles: readonly { readonly name: string; readonly perms: readonly { readonly permType: AuthPermType; readonly key: Uint8Array; readonly rangeEnd: Uint8Array }[] }[];
}

type Entry = readonly [Buffer, Buffer];

export class AuthRecordError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AuthRecordError';
  }
}

const PERM_TYPES: readonly AuthPermType[] = ['READ', 'WRITE', 'READWRITE'];
const ENABLED_KEY = 'authEnabled';
const REVISION_KEY = 'authRevision';
const ROOT = 'root';

/** A length-delimited field of `len` bytes, including an empty one (a present sub-message). */
const lenFieldLen = (field: number, len: number): number => varintLength(field << 3) + varintLength(len) + len;

function message(size: number, write: (w: Writer) => void): Buffer {
  const w = new Writer(size);
  write(w);
  if (w.pos !== size) throw new Error(`protobuf size ${size} != ${w.pos} written`);
  return w.buf;
}

function encodeUser(u: AuthImage['users'][number]): Buffer {
  const name = Buffer.from(u.name);
  const password = Buffer.from(u.password);
  const roles = u.roles.map((r) => Buffer.from(r));
  const options = intFieldLen(1, u.noPassword ? 1 : 0);
  const size = bytesFieldLen(1, name.length) + bytesFieldLen(2, password.length) + roles.reduce((n, r) => n + lenFieldLen(3, r.length), 0) + lenFieldLen(4, options);
  return message(size, (w) => {
    writeBytes(w, 1, name);
    writeBytes(w, 2, password);
    for (const r of roles) w.bytes(0x1a, r);
    w.head(0x22, options);
    writeInt(w, 1, u.noPassword ? 1 : 0);
  });
}

function encodeRole(r: AuthImage['roles'][number]): Buffer {
  const name = Buffer.from(r.name);
  const perms = r.perms.map((p) => {
    const type = PERM_TYPES.indexOf(p.permType);
    if (type < 0) throw new Error(`role ${r.name}: permission type ${String(p.permType)}`);
    const size = intFieldLen(1, type) + bytesFieldLen(2, p.key.length) + bytesFieldLen(3, p.rangeEnd.length);
    return message(size, (w) => {
      writeInt(w, 1, type);
      writeBytes(w, 2, p.key);
      writeBytes(w, 3, p.rangeEnd);
    });
  });
  return message(
    bytesFieldLen(1, name.length) + perms.reduce((n, p) => n + lenFieldLen(2, p.length), 0),
    (w) => {
      writeBytes(w, 1, name);
      for (const p of perms) w.bytes(0x12, p);
    },
  );
}

const byKey = (a: Entry, b: Entry): number => Buffer.compare(a[0], b[0]);

/** The three buckets' records, each sorted by key; no state (auth never touched) is etcd's fresh store. */
export function etcdAuthBuckets(image: AuthImage | undefined): { auth: Entry[]; authUsers: Entry[]; authRoles: Entry[] } {
  const revision = Buffer.alloc(8);
  revision.writeBigUInt64BE(BigInt(image?.revision ?? 1));
  const auth: Entry[] = [[Buffer.from(REVISION_KEY), revision]];
  if (image?.enabled === true) auth.unshift([Buffer.from(ENABLED_KEY), Buffer.from([1])]);
  return {
    auth,
    authUsers: (image?.users ?? []).map((u): Entry => [Buffer.from(u.name), encodeUser(u)]).sort(byKey),
    authRoles: (image?.roles ?? []).map((r): Entry => [Buffer.from(r.name), encodeRole(r)]).sort(byKey),
  };
}

// ---- reading ----

const utf8 = new TextDecoder('utf-8', { fatal: true });

function text(b: Buffer, what: string): string {
  try {
    return utf8.decode(b);
  } catch {
    throw new AuthRecordError(`${what}: not UTF-8 (${b.toString('hex')})`);
  }
}

/**
 * The fields of a message, every occurrence (repeated fields), checked against the wire type each
 * field number must have; unknown field numbers are skipped, as protobuf decoders do.
 */
function decode(b: Buffer, wires: Readonly<Record<number, number>>, what: string): Map<number, (bigint | Buffer)[]> {
  const out = new Map<number, (bigint | Buffer)[]>();
  const it = wireFields(b);
  for (let r = it.next(); ; r = it.next()) {
    if (r.done === true) {
      if (!r.value) throw new AuthRecordError(`${what}: not a protobuf message (truncated, or a wire type etcd does not use)`);
      return out;
    }
    const f = r.value;
    const want = wires[f.no];
    if (want === undefined) continue;
    if (f.wire !== want) throw new AuthRecordError(`${what}: field ${f.no} has wire type ${f.wire}, not ${want}`);
    const v = f.wire === WIRE_VARINT ? varintValue(b, f) : b.subarray(f.start, f.end);
    out.set(f.no, [...(out.get(f.no) ?? []), v]);
  }
}

const last = (m: Map<number, (bigint | Buffer)[]>, no: number): bigint | Buffer | undefined => m.get(no)?.at(-1);
const lastBytes = (m: Map<number, (bigint | Buffer)[]>, no: number): Buffer => (last(m, no) as Buffer | undefined) ?? Buffer.alloc(0);
const lastInt = (m: Map<number, (bigint | Buffer)[]>, no: number): bigint => (last(m, no) as bigint | undefined) ?? 0n;
const all = (m: Map<number, (bigint | Buffer)[]>, no: number): Buffer[] => (m.get(no) ?? []) as Buffer[];

/** A record's name field must be its key, as etcd puts it. */
function nameOf(key: Buffer, m: Map<number, (bigint | Buffer)[]>, what: string): string {
  const name = lastBytes(m, 1);
  if (!name.equals(key)) throw new AuthRecordError(`${what}: the record's name is ${JSON.stringify(name.toString())}`);
  if (name.length === 0) throw new AuthRecordError(`${what}: empty name`);
  return text(name, what);
}

/** bcrypt's modular crypt format, as Go's bcrypt writes it. */
const BCRYPT_HASH = /^\$2[abxy]?\$\d\d\$[./A-Za-z0-9]{53}$/;

function decodeUser(key: Buffer, v: Buffer): AuthImage['users'][number] {
  const what = `authUsers ${JSON.stringify(key.toString())}`;
  const m = decode(v, { 1: WIRE_LEN, 2: WIRE_LEN, 3: WIRE_LEN, 4: WIRE_LEN }, what);
  const name = nameOf(key, m, what);
  const options = decode(lastBytes(m, 4), { 1: WIRE_VARINT }, `${what} options`);
  const noPassword = lastInt(options, 1) !== 0n;
  const password = text(lastBytes(m, 2), `${what} password`);
  if (!noPassword && !BCRYPT_HASH.test(password)) throw new AuthRecordError(`${what}: the password is not a bcrypt hash`);
  const roles = all(m, 3).map((r, i) => text(r, `${what} role ${i}`));
  if (roles.some((r) => r === '')) throw new AuthRecordError(`${what}: an empty role name`);
  return { name, password: noPassword ? '' : password, roles: [...new Set(roles)].sort(), noPassword };
}

function decodeRole(key: Buffer, v: Buffer): AuthImage['roles'][number] {
  const what = `authRoles ${JSON.stringify(key.toString())}`;
  const m = decode(v, { 1: WIRE_LEN, 2: WIRE_LEN }, what);
  const name = nameOf(key, m, what);
  const perms = all(m, 2).map((p, i) => {
    const pm = decode(p, { 1: WIRE_VARINT, 2: WIRE_LEN, 3: WIRE_LEN }, `${what} permission ${i}`);
    const type = lastInt(pm, 1);
    const permType = PERM_TYPES[Number(type)];
    if (type > 2n || !permType) throw new AuthRecordError(`${what} permission ${i}: type ${type} is not READ, WRITE or READWRITE`);
    return { permType, key: Buffer.from(lastBytes(pm, 2)), rangeEnd: Buffer.from(lastBytes(pm, 3)) };
  });
  return { name, perms: perms.sort((a, b) => Buffer.compare(a.key, b.key)) };
}

/**
 * The auth state held by an etcd snapshot's three buckets (absent buckets read as empty ones). The state
 * must be one etcd could be in: with auth enabled, the root user holds the root role.
 */
export function readEtcdAuthBuckets(auth: Iterable<Entry>, users: Iterable<Entry>, roles: Iterable<Entry>): AuthImage {
  let enabled = false;
  let revision = 0n;
  for (const [k, v] of auth) {
    const name = k.toString('latin1');
    if (name === ENABLED_KEY) {
      if (v.length !== 1 || (v[0] !== 0 && v[0] !== 1)) throw new AuthRecordError(`auth ${ENABLED_KEY}: ${v.toString('hex') || 'empty'} is neither 1 nor 0`);
      enabled = v[0] === 1;
    } else if (name === REVISION_KEY) {
      if (v.length !== 8) throw new AuthRecordError(`auth ${REVISION_KEY}: ${v.length} bytes, not 8`);
      revision = v.readBigUInt64BE(0);
      if (revision > BigInt(Number.MAX_SAFE_INTEGER)) throw new AuthRecordError(`auth ${REVISION_KEY}: ${revision} is beyond 2^53`);
    }
  }
  const image: AuthImage = {
    enabled,
    // etcd commits revision 1 when it opens a store without one.
    revision: Math.max(1, Number(revision)),
    users: [...users].map(([k, v]) => decodeUser(k, v)),
    roles: [...roles].map(([k, v]) => decodeRole(k, v)),
  };
  if (enabled && !image.users.some((u) => u.name === ROOT && u.roles.includes(ROOT))) {
    throw new AuthRecordError('auth is enabled but there is no root user with the root role');
  }
  return image;
}
