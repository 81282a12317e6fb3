// Turns one side's etcdctl output into what must be equal across etcd and Setpoint. Only values that
// legitimately differ are replaced: member and cluster ids (both sides derive them as etcd does, from the
// peer URLs, but the two clusters run side by side on different ports, so the ids and the order of
// by-id listings differ; member-ids.test.ts compares them unmasked, on the same URLs), lease ids (etcd derives them from the member id), URLs and ports, raft terms and indexes
// (etcd's log holds its bootstrap entries), db sizes and hashes (bbolt pages vs our encoding), timings,
// and log line decorations. Revisions, keys, values, versions, counts, errors and exit codes stay.
// Values that recur (a lease, a hash) become numbered tokens in order of appearance, so "the same lease
// twice" still has to be the same on both sides.

export interface SideIds {
  /** Member name → id (hex, as etcdctl prints it). */
  readonly members: Map<string, string>;
  clusterId: string;
  /** URL → token (client and peer URLs of every slot). */
  readonly urls: Map<string, string>;
  /** The side's scratch dir (snapshot files). */
  readonly tmp: string;
}

export class Normalizer {
  private readonly ids = new Map<string, string>();
  private readonly hashes = new Map<string, string>();

  constructor(readonly side: SideIds) {}

  /** A lease (or other server-chosen) id by value, numbered in order of first appearance. */
  idToken(hex: string): string {
    const v = BigInt(`0x${hex}`).toString(16);
    let t = this.ids.get(v);
    if (!t) {
      t = `<id${this.ids.size + 1}>`;
      this.ids.set(v, t);
    }
    return t;
  }

  private hashToken(h: string): string {
    let t = this.hashes.get(h);
    if (!t) {
      t = `<hash${this.hashes.size + 1}>`;
      this.hashes.set(h, t);
    }
    return t;
  }

  private memberByDec(dec: string): string | undefined {
    for (const [name, hex] of this.side.members) if (BigInt(`0x${hex}`).toString() === dec) return `<member:${name}>`;
    return undefined;
  }

  private clusterByDec(dec: string): string | undefined {
    return this.side.clusterId !== '' && BigInt(`0x${this.side.clusterId}`).toString() === dec ? '<cluster>' : undefined;
  }

  /** Normalizes a whole output (stdout or stderr); `sort` compares its lines (and JSON arrays) as sets. */
  output(text: string, sort: boolean): string {
    const lines = text.split('\n').map((l) => this.line(l, sort)).filter((l) => l !== undefined);
    if (sort) {
      const last = lines.length > 0 && lines[lines.length - 1] === '' ? lines.pop() : undefined;
      lines.sort();
      if (last !== undefined) lines.push(last);
    }
    return lines.join('\n');
  }

  private line(l: string, sort: boolean): string | undefined {
    if (l.startsWith('{"level":')) return this.logLine(l);
    if (/^[[{]/.test(l)) {
      try {
        return JSON.stringify(this.json(parseJsonBig(l), '', undefined, sort));
      } catch {
        // not JSON after all: treat as text
      }
    }
    if (/^\+[-+]+\+$/.test(l)) return '+';
    if (l.startsWith('|')) return this.tableRow(l);
    return this.text(l);
  }

  /** clientv3's zap lines: keep level, message and error; drop time, caller, target and sizes. */
  private logLine(l: string): string {
    try {
      const o = JSON.parse(l) as Record<string, unknown>;
      const err = typeof o['error'] === 'string' ? `: ${this.text(o['error'])}` : '';
      return `${String(o['level'])}: ${String(o['msg'])}${err}`;
    } catch {
      return this.text(l);
    }
  }

  private tableHeader: string[] = [];

  private tableRow(l: string): string {
    const cells = l.split('|').slice(1, -1).map((c) => c.trim());
    if (cells.includes('ENDPOINT') || cells.includes('ID')) {
      this.tableHeader = cells;
      return `| ${cells.join(' | ')} |`;
    }
    const out = cells.map((c, i) => {
      const col = this.tableHeader[i];
      if (col === 'DB SIZE') return '<size>';
      if (col === 'RAFT TERM' || col === 'RAFT INDEX' || col === 'RAFT APPLIED INDEX') return '<n>';
      if (col === 'HASH') return this.hashToken(c);
      return this.text(c);
    });
    return `| ${out.join(' | ')} |`;
  }

  /** Plain text: URLs, known ids, server-chosen ids, timings. */
  text(s: string): string {
    let t = s;
    // Longest first, so http://127.0.0.1:1234 is not half-replaced by 127.0.0.1:1234.
    const urls = [...this.side.urls].sort((a, b) => b[0].length - a[0].length);
    for (const [url, tok] of urls) t = t.replaceAll(url, tok).replaceAll(url.replace(/^https?:\/\//, ''), tok);
    if (this.side.tmp !== '') t = t.replaceAll(this.side.tmp, '<tmp>');
    for (const [name, hex] of this.side.members) {
      t = t.replace(new RegExp(`\\b0*${hex}\\b`, 'g'), `<member:${name}>`);
      t = t.replace(new RegExp(`\\b${BigInt(`0x${hex}`).toString()}\\b`, 'g'), `<member:${name}>`);
    }
    if (this.side.clusterId !== '') {
      t = t.replace(new RegExp(`\\b${this.side.clusterId}\\b`, 'g'), '<cluster>');
      t = t.replace(new RegExp(`\\b${BigInt(`0x${this.side.clusterId}`).toString()}\\b`, 'g'), '<cluster>');
    }
    t = t
      .replace(/took = [0-9.]+[µmn]?s/g, 'took = <t>')
      .replace(/remaining\(\d+s\)/g, 'remaining(<n>s)')
      .replace(/"RaftTerm" : \d+/g, '"RaftTerm" : <n>')
      .replace(/"MemberID" : <member:[^>]+>/g, '"MemberID" : <member>')
      .replace(/"Lease" : (\d+)/g, (m, d: string) => (d === '0' ? m : `"Lease" : ${this.idToken(BigInt(d).toString(16))}`))
      // -w fields, as the JSON keys above: sizes, raft indexes, hashes, server-chosen ids.
      .replace(/"(DBSize|DBSizeInUse)" : \d+/g, '"$1" : <size>')
      .replace(/"(RaftIndex|RaftAppliedIndex)" : \d+/g, '"$1" : <n>')
      .replace(/"Hash" : (\d+)/g, (_m, h: string) => `"Hash" : ${this.hashToken(h)}`)
      .replace(/"ID" : (\d+)/g, (m, d: string) => (d === '0' ? m : `"ID" : ${this.idToken(BigInt(d).toString(16))}`))
      // Lease ids etcdctl prints in hex (%016x in lease commands, %x in lock and election keys).
      .replace(/\b[0-9a-f]{12,16}\b/g, (h) => this.idToken(h));
    // `endpoint status` and `endpoint hashkv` in the simple format: size, term, indexes and hash by position.
    t = t.replace(/^(<[^>]+>), (<member:[^>]+>), ([\d.]+), ([\d.]+ [kMG]?B), (true|false), (true|false), \d+, \d+, \d+, (.*)$/, '$1, $2, $3, <size>, $5, $6, <n>, <n>, <n>, $7');
    t = t.replace(/^(<ep:[^>]+>), (\d+)$/, (_m, ep: string, h: string) => `${ep}, ${this.hashToken(h)}`);
    // etcdctl pads ids to 16 hex digits with spaces (%16x); an id with fewer digits (one in sixteen starts
    // with a zero digit) pads more.
    t = t.replace(/ {2,}(<(?:member|cluster|id)[^>]*>)/g, ' $1');
    // A lease's keys come from a Go map in etcd: their order is unspecified.
    t = t.replace(/attached keys\(\[(.*)\]\)/, (_m, ks: string) => `attached keys([${ks.split(' ').sort().join(' ')}])`);
    // `member add` lists the cluster in member id order, which differs with the ids.
    t = t.replace(/^ETCD_INITIAL_CLUSTER="(.*)"$/, (_m, v: string) => `ETCD_INITIAL_CLUSTER="${v.split(',').sort().join(',')}"`);
    return t;
  }

  private json(v: unknown, key: string, parent: Record<string, unknown> | undefined, sort: boolean): unknown {
    if (Array.isArray(v)) {
      const a = v.map((x) => this.json(x, key, parent, sort));
      // A lease's keys (timetolive --keys) come from a Go map in etcd: their order is unspecified.
      const unordered = key === 'keys' && parent !== undefined && ('granted-ttl' in parent || 'grantedTTL' in parent);
      return sort || unordered ? a.sort((x, y) => JSON.stringify(x).localeCompare(JSON.stringify(y))) : a;
    }
    if (v !== null && typeof v === 'object') {
      const o = v as Record<string, unknown>;
      const out: Record<string, unknown> = {};
      // Keys sorted: etcdctl prints them in struct order anyway, and an added key must not move the rest.
      for (const [k, x] of Object.entries(o).sort(([a], [b]) => a.localeCompare(b))) out[k] = this.json(x, k, o, sort);
      // A Status: its db sizes are sizes of different encodings, and 0 (an empty store that came in a
      // snapshot) is one of them, which proto3 leaves out.
      if ('version' in o && 'raftIndex' in o) return Object.fromEntries(Object.entries({ ...out, dbSize: '<size>', dbSizeInUse: '<size>' }).sort(([a], [b]) => a.localeCompare(b)));
      return out;
    }
    if (typeof v === 'string') return this.jsonString(v, key, parent);
    if (typeof v === 'number') return this.jsonString(String(v), key, parent);
    return v;
  }

  private jsonString(v: string, key: string, parent: Record<string, unknown> | undefined): unknown {
    if (key === 'took') return '<t>';
    const isNum = /^\d+$/.test(v);
    if (!isNum) return this.text(v);
    const asNumber = (): unknown => (v.length > 15 ? v : Number(v));
    switch (key) {
      case 'cluster_id':
      case 'ClusterID':
        return this.clusterByDec(v) ?? '<cluster?>';
      case 'member_id':
      case 'MemberID':
        // Which member answered is the client balancer's pick: any member of this side will do.
        return this.memberByDec(v) !== undefined ? '<member>' : '<member?>';
      case 'leader':
      case 'memberID':
        return v === '0' ? 0 : (this.memberByDec(v) ?? '<member?>');
      case 'raft_term':
      case 'raftTerm':
      case 'raftIndex':
      case 'raftAppliedIndex':
        return '<n>';
      case 'dbSize':
      case 'dbSizeInUse':
      case 'totalSize':
        return '<size>';
      case 'hash':
        return this.hashToken(v);
      case 'ttl':
        // etcdctl's own JSON for timetolive: the remaining TTL ticks with the clock.
        return parent && 'granted-ttl' in parent && v !== '0' ? '<ttl>' : asNumber();
      case 'ID':
      case 'id':
      case 'lease':
        if (v === '0') return 0;
        return this.memberByDec(v) ?? this.idToken(BigInt(v).toString(16));
      case 'TTL':
        // A remaining TTL ticks with the clock; the granted TTL beside it does not.
        return parent && 'grantedTTL' in parent && v !== '0' ? '<ttl>' : asNumber();
      default:
        return asNumber();
    }
  }
}

/** JSON.parse that keeps integers beyond 2^53 (uint64 ids) exact, as decimal strings. */
export function parseJsonBig(text: string): unknown {
  return JSON.parse(text.replace(/([:[,]\s*)(\d{16,})(?=\s*[,}\]])/g, '$1"$2"'));
}
