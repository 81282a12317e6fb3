// Runs a parsed script against one side (an etcd or a Setpoint cluster) and returns one normalized
// record per compared step. Placeholders in arguments and stdin ({id:n2}, {ep:leader}, {lease:1}, …) are
// resolved against this side's own cluster, so one script drives both.
import { mkdtemp, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { CtlProcess, etcdctl } from '../../src/harness/etcdctl.js';
import type { CtlOptions, CtlResult } from '../../src/harness/etcdctl.js';
import { httpGet } from '../../src/harness/http-get.js';
import type { StoreCluster } from '../../src/harness/store-cluster.js';
import { waitFor } from '../../src/harness/wait.js';
import { clusterIdFor, memberIdFor } from '../../src/server/member/membership.js';
import { Normalizer, parseJsonBig } from './normalize.js';
import type { Step } from './script.js';

export interface StepRecord {
  readonly line: number;
  readonly text: string;
  readonly known?: string;
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

const RETRY_FOR_MS = 30_000;

interface StatusJson {
  Endpoint: string;
  Status: { header: { member_id: string | number }; leader: string | number; isLearner?: boolean };
}

function hex(dec: string | number): string {
  return BigInt(dec).toString(16);
}

export class SideRunner {
  private readonly norm: Normalizer;
  private readonly leases: string[] = [];
  private readonly bg = new Map<string, { proc: CtlProcess; step: Step & { kind: 'run' } }>();
  private lastInitialCluster = '';

  private constructor(
    readonly cluster: StoreCluster,
    private readonly tmp: string,
  ) {
    const urls = new Map<string, string>();
    for (const s of cluster.members.values()) {
      urls.set(s.clientUrl, `<ep:${s.name}>`);
      urls.set(s.peerUrl, `<peer:${s.name}>`);
    }
    this.norm = new Normalizer({ members: new Map(), clusterId: '', urls, tmp });
  }

  static async create(cluster: StoreCluster): Promise<SideRunner> {
    const tmp = await mkdtemp(join(cluster.dir, 'scratch-'));
    const r = new SideRunner(cluster, tmp);
    await r.refreshMembers();
    r.checkIds();
    // Who wins the first election is chance; scripts that name the leader start with n1 on both sides.
    const { leader } = await r.roles();
    if (leader !== 'n1') {
      const moved = await r.ctl([`--endpoints=${cluster.clientUrl(leader)}`, 'move-leader', r.memberHex('n1')]);
      if (moved.code !== 0) throw new Error(`cannot make n1 the ${cluster.program} leader: ${moved.stderr}`);
      await waitFor('n1 to lead', async () => (await r.roles()).leader === 'n1');
    }
    return r;
  }

  /**
   * Both sides must derive member and cluster ids exactly as etcd does (the peer URLs and the token), or
   * scripts would compare the wrong things: a founding member whose id is not etcd's fails the script.
   */
  private checkIds(): void {
    const founders = [...this.cluster.members.values()].filter((s) => s.running);
    const want = founders.map((s) => memberIdFor([s.peerUrl], this.cluster.o.token ?? 'etcd-cluster'));
    const got = founders.map((s) => this.norm.side.members.get(s.name));
    const wantHex = want.map((id) => id.toString(16));
    const wantCluster = clusterIdFor(want).toString(16);
    if (got.join(',') !== wantHex.join(',') || this.norm.side.clusterId !== wantCluster) {
      throw new Error(`${this.cluster.program}: member ids ${got.join(',')} in cluster ${this.norm.side.clusterId}, etcd's would be ${wantHex.join(',')} in ${wantCluster}`);
    }
  }

  /**
   * etcdctl as a user runs it: its own timeouts, the client certificate of a TLS cluster first (so a
   * script's own flags, e.g. --cert=, win), the endpoints among the arguments.
   */
  private ctlOptions(tls = true): CtlOptions {
    const t = this.cluster.tls;
    return { generousTimeouts: false, timeoutMs: 30_000, ...(tls && t ? { tls: t } : {}) };
  }

  private ctl(args: readonly string[], stdin = '', tls = true): Promise<CtlResult> {
    return etcdctl('', args, { ...this.ctlOptions(tls), input: stdin });
  }

  private memberHex(name: string): string {
    const id = this.norm.side.members.get(name);
    if (id === undefined) throw new Error(`no member id known for ${name}`);
    return id;
  }

  private get allEndpoints(): string {
    return this.cluster.endpoints().join(',');
  }

  /** Learns member ids and the cluster id from `member list -w json`. */
  private async refreshMembers(): Promise<void> {
    const r = await this.ctl([`--endpoints=${this.allEndpoints}`, 'member', 'list', '-w', 'json']);
    const j = parseJsonBig(r.stdout) as { header: { cluster_id: string | number }; members: { ID: string | number; name?: string; peerURLs?: string[] }[] };
    this.norm.side.clusterId = hex(j.header.cluster_id);
    for (const m of j.members) {
      const slot = [...this.cluster.members.values()].find((s) => m.peerURLs?.includes(s.peerUrl));
      const name = m.name !== undefined && m.name !== '' ? m.name : slot?.name;
      if (name !== undefined) this.norm.side.members.set(name, hex(m.ID));
    }
  }

  /** Who leads now, and the first voting follower by name, from `endpoint status` on every member. */
  private async roles(): Promise<{ leader: string; follower: string }> {
    let out: { leader: string; follower: string } | undefined;
    await waitFor('a leader that every member agrees on', async () => {
      const r = await this.ctl([`--endpoints=${this.allEndpoints}`, 'endpoint', 'status', '-w', 'json']);
      let st: StatusJson[];
      try {
        st = parseJsonBig(r.stdout) as StatusJson[];
      } catch {
        return false;
      }
      const nameOf = (id: string | number): string | undefined => [...this.norm.side.members].find(([, h]) => h === hex(id))?.[0];
      const leaders = new Set(st.map((s) => String(s.Status.leader)));
      const leaderDec = [...leaders][0];
      if (leaders.size !== 1 || leaderDec === undefined || leaderDec === '0') return false;
      const leaderHex = hex(leaderDec);
      const leader = nameOf(leaderDec);
      const followers = st
        .filter((s) => hex(s.Status.header.member_id) !== leaderHex && s.Status.isLearner !== true)
        .map((s) => nameOf(s.Status.header.member_id))
        .filter((n): n is string => n !== undefined)
        .sort();
      if (leader === undefined || followers[0] === undefined) return false;
      out = { leader, follower: followers[0] };
      return true;
    });
    return out as { leader: string; follower: string };
  }

  private async memberName(ref: string): Promise<string> {
    if (ref === 'leader' || ref === 'follower') return (await this.roles())[ref];
    return ref;
  }

  /** Expands {…} placeholders. */
  private async expand(s: string): Promise<string> {
    const parts = s.split(/(\{[^{}]+\})/);
    let out = '';
    for (const p of parts) {
      const m = /^\{([a-z]+)(?::(.*))?\}$/.exec(p);
      if (!m) {
        out += p;
        continue;
      }
      const [, kind, arg = ''] = m;
      switch (kind) {
        case 'eps':
          out += this.allEndpoints;
          break;
        case 'ep':
          out += this.cluster.clientUrl(await this.memberName(arg));
          break;
        case 'peer':
          out += this.cluster.peerUrl(arg);
          break;
        case 'hostport':
          out += this.cluster.clientUrl(await this.memberName(arg)).replace(/^https?:\/\//, '');
          break;
        case 'ca':
        case 'cert':
        case 'key': {
          const t = this.cluster.tls;
          if (!t) throw new Error(`{${kind}} needs a TLS cluster (#! tls)`);
          const own = kind === 'ca' ? t.caFile : kind === 'cert' ? t.certFile : t.keyFile;
          // {cert:root}: the certificate the same CA signed for CN root, beside the cluster's client one.
          out += arg === '' || kind === 'ca' ? own : join(dirname(own), `${arg}.${kind === 'cert' ? 'crt' : 'key'}`);
          break;
        }
        case 'id':
          out += this.memberHex(await this.memberName(arg));
          break;
        case 'lease': {
          const id = this.leases[Number(arg) - 1];
          if (id === undefined) throw new Error(`no lease ${arg} granted yet`);
          out += id;
          break;
        }
        case 'tmp':
          out += this.tmp;
          break;
        case 'repeat': {
          const i = arg.lastIndexOf(':');
          out += arg.slice(0, i).repeat(Number(arg.slice(i + 1)));
          break;
        }
        case 'seq': {
          const i = arg.lastIndexOf(':');
          const fmt = arg.slice(0, i);
          out += Array.from({ length: Number(arg.slice(i + 1)) }, (_, k) => fmt.replaceAll('%d', String(k))).join('\n');
          break;
        }
        default:
          throw new Error(`unknown placeholder ${p}`);
      }
    }
    return out;
  }

  /** Watch requests the cluster has received: a watch or progress request has reached a server once this grows. */
  private async watchRequests(): Promise<number> {
    let n = 0;
    for (const ep of this.cluster.endpoints()) {
      const text = (await httpGet(`${ep}/metrics`, this.cluster.tls))?.body ?? '';
      for (const l of text.split('\n')) {
        if (l.startsWith('grpc_server_msg_received_total{') && l.includes('grpc_method="Watch"') && l.includes('grpc_service="etcdserverpb.Watch"')) {
          n += Number(l.slice(l.lastIndexOf(' ') + 1));
        }
      }
    }
    return n;
  }

  private async untilWatchRequest(before: number, what: string, proc: CtlProcess): Promise<void> {
    await waitFor(`${what} to reach the server`, async () => proc.exited || (await this.watchRequests()) > before, { timeoutMs: 20_000 });
  }

  private record(step: Step, r: CtlResult, sort: boolean, known?: string): StepRecord {
    this.capture(step, r.stdout);
    return {
      line: step.line,
      text: step.text,
      ...(known !== undefined ? { known } : {}),
      code: r.code,
      stdout: this.norm.output(r.stdout, sort),
      stderr: this.norm.output(r.stderr, sort),
    };
  }

  /** Values later steps refer to: granted leases, members added (and the cluster they must join). */
  private capture(step: Step, stdout: string): void {
    for (const m of stdout.matchAll(/^lease ([0-9a-f]{16}) granted with TTL\(\d+s\)$/gm)) this.leases.push(m[1] as string);
    const added = /Member\s+([0-9a-f]+)\s+added to cluster/.exec(stdout);
    if (added && step.kind === 'run') {
      const name = step.args[step.args.indexOf('add') + 1];
      if (name !== undefined) this.norm.side.members.set(name, added[1] as string);
      this.lastInitialCluster = /ETCD_INITIAL_CLUSTER="([^"]*)"/.exec(stdout)?.[1] ?? '';
    }
  }

  async run(steps: readonly Step[]): Promise<StepRecord[]> {
    const out: StepRecord[] = [];
    try {
      for (const step of steps) {
        try {
          out.push((await this.step(step)) ?? { line: step.line, text: step.text, code: 0, stdout: '', stderr: '' });
        } catch (e) {
          // Recorded, not thrown: the other side's record for this step shows what was expected.
          out.push({ line: step.line, text: step.text, code: null, stdout: '', stderr: `harness: ${(e as Error).message}` });
        }
      }
    } finally {
      for (const { proc } of this.bg.values()) await proc.stop();
      this.bg.clear();
      await rm(this.tmp, { recursive: true, force: true });
    }
    return out;
  }

  private async step(step: Step): Promise<StepRecord | undefined> {
    switch (step.kind) {
      case 'run': {
        const args = await Promise.all(step.args.map((a) => this.expand(a)));
        const hasEndpoints = args.some((a) => a.startsWith('--endpoints'));
        const ep = step.mods.ep !== undefined ? this.cluster.clientUrl(await this.memberName(step.mods.ep)) : this.allEndpoints;
        const argv = hasEndpoints ? args : [`--endpoints=${ep}`, ...args];
        const stdin = step.stdin !== undefined ? await this.expand(step.stdin) : '';
        if (step.bg !== undefined) {
          const before = await this.watchRequests();
          const proc = new CtlProcess('', argv, this.ctlOptions(step.mods.noTls !== true));
          if (stdin !== '') proc.write(`${stdin.replace(/\n$/, '')}\n`);
          this.bg.set(step.bg, { proc, step });
          // A plain watch must be in place before the next step writes what it should see.
          if (args[0] === 'watch' && !args.includes('-i') && !args.includes('--interactive')) await this.untilWatchRequest(before, step.text, proc);
          return undefined;
        }
        let r = await this.ctl(argv, stdin, step.mods.noTls !== true);
        const again = (x: CtlResult): boolean =>
          (step.mods.retry && x.code !== 0) || (step.mods.retryWhile !== undefined && (x.stdout + x.stderr).includes(step.mods.retryWhile));
        if (again(r)) {
          const deadline = Date.now() + RETRY_FOR_MS;
          while (again(r) && Date.now() < deadline) {
            await new Promise((res) => setTimeout(res, 200));
            r = await this.ctl(argv, stdin, step.mods.noTls !== true);
          }
        }
        return this.record(step, r, step.mods.sort, step.mods.known);
      }
      case 'write': {
        const b = this.bg.get(step.name);
        if (!b) throw new Error(`line ${step.line}: no background etcdctl named ${step.name}`);
        const input = await this.expand(step.input);
        const before = await this.watchRequests();
        b.proc.write(`${input}\n`);
        // `watch …` and `progress` in watch -i each send one request: wait until it has arrived.
        if (/^(watch|progress)\b/.test(input)) await this.untilWatchRequest(before, step.text, b.proc);
        return undefined;
      }
      case 'wait': {
        const b = this.bg.get(step.name);
        if (!b) throw new Error(`line ${step.line}: no background etcdctl named ${step.name}`);
        await b.proc.waitLines(step.lines);
        if (!step.stop) return undefined;
        this.bg.delete(step.name);
        const r = await b.proc.stop();
        // The stop itself is ours (SIGTERM): what is compared is what etcdctl printed until then.
        return { ...this.record(b.step, { ...r, code: null }, b.step.mods.sort, b.step.mods.known), line: step.line, text: `${b.step.text}  ⟶  ${step.text}` };
      }
      case 'member': {
        if (step.action === 'stop' || step.action === 'kill') {
          await this.cluster.kill(step.name, step.action === 'stop' ? 'SIGTERM' : 'SIGKILL');
          return undefined;
        }
        if (step.action === 'restart') {
          // Back when it is healthy: it answers a linearizable read.
          await this.cluster.restart(step.name, { wait: 'ready' });
          return undefined;
        }
        if (this.lastInitialCluster === '') throw new Error(`line ${step.line}: !start needs a "member add" before it`);
        this.cluster.launch(step.name, { initialCluster: this.lastInitialCluster, state: 'existing' });
        // Started as etcdctl means it: the member has published its name to the cluster.
        await waitFor(`${step.name} to publish its name`, async () => {
          const r = await this.ctl([`--endpoints=${this.allEndpoints}`, 'member', 'list']);
          return r.stdout.includes(`, started, ${step.name}, `);
        });
        return undefined;
      }
    }
  }
}
