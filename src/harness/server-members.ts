// Three `setpoint server` members for tests and benchmarks: one cluster CA, free ports, each member the
// leader of its own process group (so a machine failure is one SIGKILL of the group: the supervisor and
// every component at once), the leader-election identities its loops logged, and a restart on the same
// ports and data. stop() kills every group; the directory is the caller's.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { readCertDirCa } from '../apiserver/pki/cert-dir.js';
import { issueClientCert, type KeyPair } from '../apiserver/pki/certificates.js';
import { writeClientKubeconfig } from '../apiserver/pki/kubeconfig.js';
import { RestClient } from '../client/rest-client.js';
import { freePorts } from './free-port.js';
import { readyz } from './kinds/apiserver.js';
import { ManagedProcess } from './managed-process.js';
import { setpointMain } from './setpoint-main.js';

export type LoopComponent = 'scheduler' | 'controller-manager';

export interface ServerMember {
  readonly name: string;
  readonly ports: { readonly client: number; readonly peer: number; readonly api: number };
  readonly proc: ManagedProcess;
  /** Every leader-election identity its loops started with (a restarted component has a new one). */
  readonly identities: Record<LoopComponent, Set<string>>;
  /** Each loop's latest run: its identity, and the leader it has seen since it started campaigning ('' none yet). */
  readonly loops: Record<LoopComponent, { identity: string; sawLeader: string }>;
}

/** The pids whose parent is `pid`. */
export function childrenOf(pid: number): number[] {
  const out: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) out.push(Number(d));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** `setpoint server`'s command line (after the node binary) for member `name` of `initial`, data and pki under `dir`. */
export function serverMemberArgs(dir: string, name: string, p: ServerMember['ports'], initial: string): string[] {
  return [
    setpointMain(),
    'server',
    `--name=${name}`,
    `--data-dir=${join(dir, name)}`,
    `--listen-client-urls=http://127.0.0.1:${p.client}`,
    `--advertise-client-urls=http://127.0.0.1:${p.client}`,
    `--listen-peer-urls=http://127.0.0.1:${p.peer}`,
    `--initial-advertise-peer-urls=http://127.0.0.1:${p.peer}`,
    `--initial-cluster=${initial}`,
    `--secure-port=${p.api}`,
    `--cert-dir=${join(dir, 'pki')}`,
  ];
}

export class ServerMembers {
  private readonly clients: RestClient[] = [];

  private constructor(
    readonly dir: string,
    readonly members: readonly ServerMember[],
    readonly ca: KeyPair,
    private readonly admin: KeyPair,
  ) {}

  /** Starts `size` members (default 3) at once and waits until every API server is ready. */
  static async start(dir: string, o: { readonly size?: number; readonly flags?: readonly string[]; readonly timeoutMs?: number } = {}): Promise<ServerMembers> {
    const size = o.size ?? 3;
    const ports = await Promise.all(Array.from({ length: size }, () => freePorts(['client', 'peer', 'api'] as const)));
    const initial = ports.map((p, i) => `m${i + 1}=http://127.0.0.1:${p.peer}`).join(',');
    const members = ports.map((p, i): ServerMember => {
      const name = `m${i + 1}`;
      const identities: ServerMember['identities'] = { scheduler: new Set(), 'controller-manager': new Set() };
      const loops: ServerMember['loops'] = { scheduler: { identity: '', sawLeader: '' }, 'controller-manager': { identity: '', sawLeader: '' } };
      // setsid: the member leads a process group of its own, which its components join.
      const proc = new ManagedProcess(
        `setpoint server ${name}`,
        {
          bin: 'setsid',
          args: [process.execPath, ...serverMemberArgs(dir, name, p, initial), ...(o.flags ?? [])],
          env: { SETPOINT_LOG_FORMAT: 'json' },
        },
        { logFile: join(dir, `${name}.log`), onLine: (line) => noteLoopLine(identities, loops, line) },
      );
      proc.start();
      return { name, ports: p, proc, identities, loops };
    });
    try {
      for (const m of members) await waitMemberReady(dir, m, o.timeoutMs);
    } catch (e) {
      await killAll(members);
      throw e;
    }
    const ca = readCertDirCa(join(dir, 'pki'));
    return new ServerMembers(dir, members, ca, await issueClientCert(ca, { user: 'admin', groups: ['system:masters'] }));
  }

  /** An admin client of one member's API server, closed by stop(). */
  restOf(m: ServerMember, timeoutMs = 10_000): RestClient {
    const c = new RestClient({ server: `https://127.0.0.1:${m.ports.api}`, tls: { ca: this.ca.certPem, cert: this.admin.certPem, key: this.admin.keyPem }, timeoutMs });
    this.clients.push(c);
    return c;
  }

  /** An admin kubeconfig for one member's API server. */
  async kubeconfigOf(m: ServerMember): Promise<string> {
    const path = join(this.dir, `admin-${m.name}.kubeconfig`);
    await writeClientKubeconfig(path, this.ca, { server: `https://127.0.0.1:${m.ports.api}`, user: 'admin', groups: ['system:masters'] });
    return path;
  }

  /** The member one of whose loops campaigned under this identity. */
  memberOf(identity: string): ServerMember | undefined {
    return this.members.find((m) => m.identities.scheduler.has(identity) || m.identities['controller-manager'].has(identity));
  }

  /** The pids of a member's running component (`setpoint server` runs each as its own child process). */
  componentPids(m: ServerMember, component: LoopComponent): number[] {
    const pid = m.proc.pid;
    if (pid === undefined) return [];
    return childrenOf(pid).filter((c) => {
      try {
        return readFileSync(`/proc/${c}/cmdline`, 'utf8').split('\0').includes(component);
      } catch {
        return false;
      }
    });
  }

  /** A machine failure: SIGKILL to the member's whole process group at once. */
  killGroup(m: ServerMember): void {
    const pid = m.proc.pid;
    if (pid === undefined) throw new Error(`${m.name} is not running`);
    process.kill(-pid, 'SIGKILL');
  }

  /** Starts a member again on its ports and data, and waits until its API server is ready. */
  async restart(m: ServerMember): Promise<void> {
    await m.proc.exited();
    m.proc.start();
    await waitMemberReady(this.dir, m);
  }

  async stop(): Promise<void> {
    for (const c of this.clients) c.close();
    await killAll(this.members);
  }
}

async function waitMemberReady(dir: string, m: ServerMember, timeoutMs = 180_000): Promise<void> {
  const caFile = join(dir, 'pki', 'ca.crt');
  await m.proc.waitReady(
    'its API server ready',
    async () => {
      try {
        return (await readyz(m.ports.api, readFileSync(caFile, 'utf8'))) === 200;
      } catch {
        return false;
      }
    },
    timeoutMs,
  );
}

/** Every member's group, paused ones too (SIGCONT first, as the harness's reaper does). */
async function killAll(members: readonly ServerMember[]): Promise<void> {
  for (const m of members) {
    const pid = m.proc.pid;
    if (pid === undefined) continue;
    try {
      process.kill(-pid, 'SIGCONT');
      process.kill(-pid, 'SIGKILL');
    } catch {
      // gone already
    }
    await m.proc.kill('SIGKILL');
  }
}

/**
 * The server prints each component's lines as `<component> <json>`: a start line names the identity, and a
 * candidate that has seen the Lease's holder says 'new leader elected' with its identity.
 */
function noteLoopLine(identities: ServerMember['identities'], loops: ServerMember['loops'], line: string): void {
  const m = /^(scheduler|controller-manager) (\{.*)$/.exec(line);
  if (!m || !m[2]) return;
  const c = m[1] as LoopComponent;
  try {
    const o = JSON.parse(m[2]) as { identity?: unknown; msg?: unknown; leader?: unknown };
    if (typeof o.identity === 'string' && o.identity !== '') {
      identities[c].add(o.identity);
      loops[c] = { identity: o.identity, sawLeader: '' };
    }
    if (o.msg === 'new leader elected' && typeof o.leader === 'string') loops[c].sawLeader = o.leader;
  } catch {
    // not a JSON line
  }
}
