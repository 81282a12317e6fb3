// etcdctl's member and endpoint commands print exactly the same ids, in the same widths and columns, against
// etcd 3.4 and against Setpoint when both clusters have the same names, peer URLs and token. Member ids are
// derived from the peer URLs, so the two clusters run one after the other on the same ports, and their
// outputs are compared as printed. Masked in place, at their printed width, is only what legitimately
// differs: db sizes, raft terms and indexes, and the id of the member added at run time — etcd mixes the
// time (in seconds) into that one, so each side's is checked to be the id etcd's formula gives for a second
// of the `member add`, and masked only then.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { memberIdFor } from '../../src/server/member/membership.js';
import { etcdctl as harnessCtl } from '../../src/harness/etcdctl.js';
import type { CtlResult } from '../../src/harness/etcdctl.js';
import { freePort } from '../../src/harness/free-port.js';
import type { StoreProgram } from '../../src/harness/kinds/store-member.js';
import { StoreCluster } from '../../src/harness/store-cluster.js';
import { waitFor } from '../../src/harness/wait.js';

type Flavor = StoreProgram;

/** etcdctl as a user runs it, the endpoints among the arguments. */
const etcdctl = (argv: readonly string[]): Promise<CtlResult> => harnessCtl('', argv, { generousTimeouts: false, timeoutMs: 30_000 });

interface Step {
  /** etcdctl's arguments; {peer:n4} and {id:n4} are the slot's peer URL and the member's id (hex). */
  readonly args: readonly string[];
  /** Ask every member (endpoint status), not just n1, which leads on both sides. */
  readonly all?: boolean;
  /** Run again while the output says this (the strict reconfiguration check's first 5 s). */
  readonly retryWhile?: string;
  /** The step adds this member: its id is learned from the output and checked against etcd's formula. */
  readonly adds?: string;
  /** Compare the table's rows as a set: they are in id order, and the added member's id is the clock's. */
  readonly sortRows?: boolean;
}

const STEPS: readonly Step[] = [
  { args: ['member', 'list'] },
  { args: ['member', 'list', '-w', 'table'] },
  { args: ['member', 'list', '-w', 'json'] },
  { args: ['endpoint', 'status', '-w', 'table'], all: true },
  { args: ['endpoint', 'status'], all: true },
  { args: ['member', 'add', 'n4', '--peer-urls={peer:n4}'], retryWhile: 'unhealthy cluster', adds: 'n4' },
  { args: ['member', 'list', '-w', 'table'], sortRows: true },
  { args: ['member', 'remove', '{id:n4}'] },
  { args: ['member', 'remove', '1234'] },
  { args: ['member', 'list', '-w', 'table'] },
  { args: ['endpoint', 'status', '-w', 'table'], all: true },
];

const MASKED_COLUMNS = new Set(['DB SIZE', 'RAFT TERM', 'RAFT INDEX', 'RAFT APPLIED INDEX']);

interface StepOutput {
  readonly step: string;
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** What one side printed, step by step, with the added members' ids (hex) it printed. */
interface SideRun {
  readonly records: StepOutput[];
  readonly added: Map<string, string>;
}

const hexOf = (id: bigint): string => id.toString(16);

/** Runs the steps against one cluster: n1 is made the leader first, so IS LEADER reads the same on both. */
async function runSide(c: StoreCluster): Promise<SideRun> {
  const n1 = c.clientUrl('n1');
  const all = c.endpoints().join(',');
  const ids = await memberIds(c);
  await leadWith(c, 'n1', ids);
  const added = new Map<string, string>();
  const records: StepOutput[] = [];
  for (const s of STEPS) {
    const args = s.args.map((a) => a.replace(/\{peer:(\w+)\}/g, (_m, n: string) => c.peerUrl(n)).replace(/\{id:(\w+)\}/g, (_m, n: string) => ids.get(n) ?? added.get(n) ?? `<no id for ${n}>`));
    const argv = [`--endpoints=${s.all === true ? all : n1}`, ...args];
    const from = Math.floor(Date.now() / 1000);
    let r = await etcdctl(argv);
    const deadline = Date.now() + 30_000;
    while (s.retryWhile !== undefined && (r.stdout + r.stderr).includes(s.retryWhile) && Date.now() < deadline) {
      await new Promise((res) => setTimeout(res, 200));
      r = await etcdctl(argv);
    }
    const to = Math.floor(Date.now() / 1000);
    if (s.adds !== undefined) {
      const hex = /^Member +([0-9a-f]+) added/m.exec(r.stdout)?.[1];
      const peer = c.peerUrl(s.adds);
      // etcd's MemberAdd: the peer URLs, no cluster token, the Unix time in seconds.
      const expected = new Set<string>();
      for (let t = from - 1; t <= to + 1; t++) expected.add(hexOf(memberIdFor([peer], '', t)));
      if (hex !== undefined && expected.has(hex)) added.set(s.adds, hex);
    }
    records.push({ step: s.args.join(' '), code: r.code, ...printed(r, new Set(added.values()), s.sortRows === true) });
  }
  return { records, added };
}

/** Member name → id (hex), once every member has published its name and client URLs. */
async function memberIds(c: StoreCluster): Promise<Map<string, string>> {
  const ids = new Map<string, string>();
  await waitFor(`${c.program} members to publish their names and client URLs`, async () => {
    const r = await etcdctl([`--endpoints=${c.clientUrl('n1')}`, 'member', 'list']);
    ids.clear();
    for (const line of r.stdout.split('\n')) {
      const m = /^([0-9a-f]+), started, (\w+), \S+, (\S+), false$/.exec(line);
      if (m) ids.set(m[2] as string, m[1] as string);
    }
    return ids.size === c.running().length;
  });
  return ids;
}

async function leadWith(c: StoreCluster, name: string, ids: Map<string, string>): Promise<void> {
  const target = ids.get(name) as string;
  const leader = async (): Promise<string | undefined> => {
    const r = await etcdctl([`--endpoints=${c.endpoints().join(',')}`, 'endpoint', 'status', '-w', 'json']);
    try {
      const st = JSON.parse(r.stdout.replace(/(:\s*)(\d{16,})/g, '$1"$2"')) as { Endpoint: string; Status: { leader: string | number } }[];
      const ls = new Set(st.map((x) => BigInt(x.Status.leader).toString(16)));
      return ls.size === 1 && !ls.has('0') ? [...ls][0] : undefined;
    } catch {
      return undefined;
    }
  };
  await waitFor(`a ${c.program} leader`, async () => (await leader()) !== undefined);
  const now = (await leader()) as string;
  if (now === target) return;
  const from = [...ids].find(([, hex]) => hex === now)?.[0] as string;
  const moved = await etcdctl([`--endpoints=${c.clientUrl(from)}`, 'move-leader', target]);
  if (moved.code !== 0) throw new Error(`cannot make ${name} the ${c.program} leader: ${moved.stderr}`);
  await waitFor(`${name} to lead ${c.program}`, async () => (await leader()) === target);
}

/**
 * The output as printed, masked in place: table cells of the columns that legitimately differ and cells
 * holding an added member's id are filled to their width, `Member %16x` fields of an added member too
 * (if they are 16 wide; otherwise left as printed, and the comparison shows it).
 */
function printed(r: CtlResult, added: ReadonlySet<string>, sortRows: boolean): { stdout: string; stderr: string } {
  const mask = (text: string): string => {
    let header: string[] | undefined;
    const out = text.split('\n').map((line) => {
      if (line.startsWith('|')) {
        const cells = line.split('|');
        if (header === undefined) {
          header = cells.map((x) => x.trim());
          return line;
        }
        const h = header;
        return cells.map((cell, i) => (MASKED_COLUMNS.has(h[i] ?? '') || added.has(cell.trim()) ? '~'.repeat(cell.length) : cell)).join('|');
      }
      // clientv3's zap lines: level, message and error; not the time or the client's random target.
      if (line.startsWith('{"level":')) {
        const o = JSON.parse(line) as { level?: string; msg?: string; error?: string };
        return `${String(o.level)}: ${String(o.msg)}: ${String(o.error)}`;
      }
      let l = line;
      for (const hex of added) l = l.replace(new RegExp(`(?<=^Member )( *)${hex}\\b`), (m) => (m.length === 16 ? '~'.repeat(16) : m));
      // `endpoint status`: db size, raft term, raft index and applied index by position.
      l = l.replace(/^(\S+, [0-9a-f]+, \S+), [^,]+, (true|false), (true|false), \d+, \d+, \d+, /, '$1, ~, $2, $3, ~, ~, ~, ');
      l = l.replace(/"raft_term":\d+/, '"raft_term":~');
      // `member add` lists the cluster in member id order.
      return l.replace(/^ETCD_INITIAL_CLUSTER="(.*)"$/, (_m, v: string) => `ETCD_INITIAL_CLUSTER="${v.split(',').sort().join(',')}"`);
    });
    if (!sortRows) return out.join('\n');
    const body = out.filter((l, i) => l.startsWith('|') && i > 2).sort();
    let k = 0;
    return out.map((l, i) => (l.startsWith('|') && i > 2 ? (body[k++] as string) : l)).join('\n');
  };
  return { stdout: mask(r.stdout), stderr: mask(r.stderr) };
}

describe('member ids: etcdctl prints the same ids as against etcd 3.4, on the same URLs', () => {
  const runs = new Map<Flavor, SideRun>();
  let cluster: StoreCluster | undefined;

  beforeAll(async () => {
    const ports = [];
    for (let i = 0; i < 4; i++) ports.push({ client: await freePort(), peer: await freePort() });
    // One after the other: they need the same ports.
    for (const flavor of ['etcd', 'setpoint'] as const) {
      cluster = await StoreCluster.start({ program: flavor, spare: 1, ports, token: 'differential', label: 'setpoint-ids-' }, 'leader');
      try {
        runs.set(flavor, await runSide(cluster));
      } finally {
        await cluster.destroy();
        cluster = undefined;
      }
    }
  }, 240_000);

  afterAll(async () => {
    await cluster?.destroy();
  });

  it("the added member's id is etcd's: its peer URL and the time, on both sides", () => {
    expect(runs.get('etcd')?.added.has('n4')).toBe(true);
    expect(runs.get('setpoint')?.added.has('n4')).toBe(true);
  });

  it('every step prints the same as against etcd', () => {
    const ref = runs.get('etcd')?.records ?? [];
    const ours = runs.get('setpoint')?.records ?? [];
    expect(ours.length).toBe(STEPS.length);
    ref.forEach((theirs, i) => expect.soft(ours[i], `${i + 1}: etcdctl ${theirs.step}`).toEqual(theirs));
  });

  it('the ids are 16 hex digits wide where etcdctl pads them (%16x), as etcd 3.4 prints them', () => {
    const add = runs.get('setpoint')?.records.find((r) => r.step.startsWith('member add'));
    expect(add?.stdout).toMatch(/^Member ~{16} added to cluster [ 0-9a-f]{16}\n/);
  });
});
