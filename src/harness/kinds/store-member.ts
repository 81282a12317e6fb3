// A store member, etcd 3.4's or Setpoint's: both take etcd's own flags, so the two kinds differ only in the
// program (and its environment). A script that starts an etcd cluster starts a Setpoint one by changing
// the program name; so does the harness.
import { MEMBER_NODE_FLAGS } from '../../cli/member-node-flags.js';
import type { Command } from '../command.js';
import { MemberClient } from '../member-client.js';
import type { ProcessKind } from '../process-kind.js';
import { setpointMain } from '../setpoint-main.js';
import type { TlsFiles } from '../tls-files.js';

export type StoreProgram = 'etcd' | 'setpoint';
export type StorePort = 'client' | 'peer';

/** What every member of a cluster is given alike, beyond its place in it. */
export interface StoreTuning {
  /** Unset: the program's default (etcd's: heartbeat 100 ms, election 1000 ms, a snapshot every 100,000 entries). */
  readonly heartbeatMs?: number;
  readonly electionMs?: number;
  readonly snapshotCount?: number;
  /** More flags, after the harness's own (a repeated flag's last value counts, for etcd as for Setpoint). */
  readonly flags?: readonly string[];
  /** More environment. */
  readonly env?: Readonly<Record<string, string>>;
  /** Setpoint only: Node options before the program (profiling: `--cpu-prof`, which NODE_OPTIONS refuses). */
  readonly nodeArgs?: readonly string[];
}

export interface StoreMemberSpec extends StoreTuning {
  readonly name: string;
  readonly dataDir: string;
  /** The address it listens on (default 127.0.0.1). */
  readonly host?: string;
  /** The peer URL the others dial, when not the one it listens on (a proxy in between). */
  readonly advertisePeerUrl?: string;
  readonly initialCluster: string;
  readonly state: 'new' | 'existing';
  readonly token: string;
  /** Client TLS: https client URLs, with --client-cert-auth. */
  readonly tls?: TlsFiles;
  /** Peer TLS: https peer URLs, with --peer-client-cert-auth. */
  readonly peerTls?: TlsFiles;
}

export function clientUrl(spec: Pick<StoreMemberSpec, 'host' | 'tls'>, port: number): string {
  return `${spec.tls ? 'https' : 'http'}://${spec.host ?? '127.0.0.1'}:${port}`;
}

export function peerUrl(spec: Pick<StoreMemberSpec, 'host' | 'peerTls'>, port: number): string {
  return `${spec.peerTls ? 'https' : 'http'}://${spec.host ?? '127.0.0.1'}:${port}`;
}

/** etcd's flags for the member, spelled as etcd spells them. */
export function storeMemberFlags(spec: StoreMemberSpec, ports: Readonly<Record<StorePort, number>>): string[] {
  const client = clientUrl(spec, ports.client);
  const peer = peerUrl(spec, ports.peer);
  const opt = (flag: string, v: number | undefined): string[] => (v === undefined ? [] : [`--${flag}=${v}`]);
  const tls = (prefix: string, t: TlsFiles | undefined): string[] =>
    t ? [`--${prefix}cert-file=${t.certFile}`, `--${prefix}key-file=${t.keyFile}`, `--${prefix}trusted-ca-file=${t.caFile}`, `--${prefix}client-cert-auth`] : [];
  return [
    `--name=${spec.name}`,
    `--data-dir=${spec.dataDir}`,
    `--listen-client-urls=${client}`,
    `--advertise-client-urls=${client}`,
    `--listen-peer-urls=${peer}`,
    `--initial-advertise-peer-urls=${spec.advertisePeerUrl ?? peer}`,
    `--initial-cluster=${spec.initialCluster}`,
    `--initial-cluster-state=${spec.state}`,
    `--initial-cluster-token=${spec.token}`,
    ...opt('heartbeat-interval', spec.heartbeatMs),
    ...opt('election-timeout', spec.electionMs),
    ...opt('snapshot-count', spec.snapshotCount),
    ...tls('', spec.tls),
    ...tls('peer-', spec.peerTls),
    ...(spec.flags ?? []),
  ];
}

/** Serving means answering Status on the client port (a member without a leader answers it too). */
async function answersStatus(spec: StoreMemberSpec, ports: Readonly<Record<StorePort, number>>): Promise<boolean> {
  const c = new MemberClient(clientUrl(spec, ports.client), spec.tls);
  try {
    await c.status(1000);
    return true;
  } catch {
    return false;
  } finally {
    c.close();
  }
}

/** Real etcd, the reference (ETCD_BIN names another binary). Its log is zap's JSON lines on stderr. */
export const etcdMember: ProcessKind<StoreMemberSpec, StorePort> = {
  name: 'etcd',
  ports: ['client', 'peer'],
  command: (spec, ports): Command => ({
    bin: process.env.ETCD_BIN ?? 'etcd',
    args: ['--logger=zap', '--log-outputs=stderr', ...storeMemberFlags(spec, ports)],
    env: { ...spec.env },
  }),
  ready: answersStatus,
};

/**
 * `setpoint store` from this checkout's build, with the Node options Setpoint gives its members (and
 * SETPOINT_MEMBER_NODE_ARGS's, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof" to profile). Logs are JSON.
 */
export const setpointMember: ProcessKind<StoreMemberSpec, StorePort> = {
  name: 'setpoint',
  ports: ['client', 'peer'],
  command: (spec, ports): Command => ({
    bin: process.execPath,
    args: [
      ...MEMBER_NODE_FLAGS,
      ...(process.env.SETPOINT_MEMBER_NODE_ARGS ?? '').split(' ').filter(Boolean),
      ...(spec.nodeArgs ?? []),
      setpointMain(),
      'store',
      ...storeMemberFlags(spec, ports),
    ],
    env: { SETPOINT_LOG_FORMAT: 'json', ...spec.env },
  }),
  ready: answersStatus,
};

export function storeMemberKind(program: StoreProgram): ProcessKind<StoreMemberSpec, StorePort> {
  return program === 'etcd' ? etcdMember : setpointMember;
}
