// Runs a parsed script against one side (an etcd or a Setpoint cluster) and returns one normalized
// record per compared step. Placeholders in arguments and stdin ({id:n2}, {ep:leader}, {lease:1}, …) are
// resolved against this side's own cluster, so one script drives both.
import { mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { ProcessCluster } from './process-cluster.js';
import { CLUSTER_TOKEN, httpGet, waitUntil } from './process-cluster.js';
import { clusterIdFor, memberIdFor } from '../../src/server/member/membership.js';
import { CtlProcess, etcdctl } from './etcdctl.js';
import type { CtlResult } from './etcdctl.js';
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
    readonly cluster: ProcessCluster,
    private readonly tmp: string,
  ) {
    const urls = new Map<string, string>();
    for (const s of cluster.slots) {
      urls.set(s.clientUrl, `<ep:${s.name}>`);
      urls.set(s.peerUrl, `<peer:${s.name}>`);
    }
    this.norm = new Normalizer({ members: new Map(), clusterId: '', urls, tmp });
  }

  static async create(cluster: ProcessCluster): Promise<SideRunner> {
    const tmp = await mkdtemp(join(cluster.dir, 'scratch-'));
    const r = new SideRunner(cluster, tmp);
    await r.refreshMembers();
    r.checkIds();
    // Who wins the first election is chance; scripts that name the leader start with n1 on both sides.
    const { leader } = await r.roles();
    if (leader !== 'n1') {
      const moved = await r.ctl([`--endpoints=${cluster.slot(leader).clientUrl}`, 'move-leader', r.memberHex('n1')]);
      if (moved.code !== 0) throw new Error(`cannot make n1 the ${cluster.flavor} leader: ${moved.stderr}`);
      await waitUntil(async () => (await r.roles()).leader === 'n1', 'n1 to lead');
    }
    return r;
  }

  /** The client certificate flags for a TLS cluster, first, so a script's own flags (e.g. --cert=) win. */
  private tlsArgs(): string[] {
    const t = this.cluster.tls;
    return t ? [`--cacert=${t.caFile}`, `--cert=${t.certFile}`, `--key=${t.keyFile}`] : [];
  }

  private ctl(args: readonly string[], stdin = '', tls = true): Promise<CtlResult> {
    return etcdctl([...(tls ? this.tlsArgs() : []), ...args], stdin);
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
      const slot = this.cluster.slots.find((s) => m.peerURLs?.includes(s.peerUrl));
      const name = m.name !== undefined && m.name !== '' ? m.name : slot?.name;
      if (name !== undefined) this.norm.side.members.set(name, hex(m.ID));
    }
  }

  /**
   * Both sides must derive member and cluster ids exactly as etcd does (the peer URLs and the token), or
   * scripts would compare the wrong things: a founding member whose id is not etcd's fails the script.
   */
  private checkIds(): void {
    const founders = this.cluster.slots.filter((s) => this.cluster.running(s.name));
    const want = founders.map((s) => memberIdFor([s.peerUrl], CLUSTER_TOKEN));
    const got = founders.map((s) => this.norm.side.members.get(s.name));
    const wantHex = want.map((id) => id.toString(16));
    const wantCluster = clusterIdFor(want).toString(16);
    if (got.join(',') !== wantHex.join(',') || this.norm.side.clusterId !== wantCluster) {
      throw new Error(`${this.cluster.flavor}: member ids ${got.join(',')} in cluster ${this.norm.side.clusterId}, etcd's would be ${wantHex.join(',')} in ${wantCluster}`);
    }
  }

  /** Who leads now, and the first voting follower by name, from `endpoint status` on every member. */
  private async roles(): Promise<{ leader: string; follower: string }> {
    let out: { leader: string; follower: string } | undefined;
    await waitUntil(async () => {
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
    }, 'a leader that every member agrees on');
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
          out += this.cluster.slot(await this.memberName(arg)).clientUrl;
          break;
        case 'peer':
          out += this.cluster.slot(arg).peerUrl;
          break;
        case 'hostport':
          out += this.cluster.slot(await this.memberName(arg)).clientUrl.replace(/^https?:\/\//, '');
          break;
        case 'ca':
        case 'cert':
        case 'key': {
          const t = this.cluster.tls;
          if (!t) throw new Error(`{${kind}} needs a TLS cluster (#! tls)`);
          out += kind === 'ca' ? t.caFile : kind === 'cert' ? t.certFile : t.keyFile;
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
    await waitUntil(async () => proc.exited || (await this.watchRequests()) > before, `${what} to reach the server`, 20_000);
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
        const ep = step.mods.ep !== undefined ? this.cluster.slot(await this.memberName(step.mods.ep)).clientUrl : this.allEndpoints;
        const argv = hasEndpoints ? args : [`--endpoints=${ep}`, ...args];
        const stdin = step.stdin !== undefined ? await this.expand(step.stdin) : '';
        if (step.bg !== undefined) {
          const before = await this.watchRequests();
          const proc = new CtlProcess([...this.tlsArgs(), ...argv]);
          if (stdin !== '') proc.write(stdin.replace(/\n$/, ''));
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
        b.proc.write(input);
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
          await this.cluster.restart(step.name);
          return undefined;
        }
        if (this.lastInitialCluster === '') throw new Error(`line ${step.line}: !start needs a "member add" before it`);
        this.cluster.launch(this.cluster.slot(step.name), this.lastInitialCluster, 'existing');
        // Started as etcdctl means it: the member has published its name to the cluster.
        await waitUntil(async () => {
          const r = await this.ctl([`--endpoints=${this.allEndpoints}`, 'member', 'list']);
          return r.stdout.includes(`, started, ${step.name}, `);
        }, `${step.name} to publish its name`);
        return undefined;
      }
    }
  }
}
