// What system a run tests: a program, its argv for one member, its environment, and how the harness
// learns which member dials a peer connection. Everything else is the same for every target.
import path from 'node:path';
import { repoRoot } from './repo-root.js';
import { MEMBER_NODE_FLAGS } from '../../src/cli/member-node-flags.js';

export interface MemberLaunch {
  name: string;
  dataDir: string;
  clientUrl: string;
  listenPeerUrl: string;
  advertisePeerUrl: string;
  initialCluster: string;
  state: 'new' | 'existing';
  token: string;
  heartbeatMs: number;
  electionMs: number;
  snapshotCount: number;
  /** Setpoint only: advertised peer URL → URL of the harness proxy this member must dial instead. */
  dialMap: Map<string, string>;
}

export interface Target {
  name: 'etcd' | 'setpoint';
  /** 'sniff': one proxy per member, dialer read from HTTP/1.1 headers; 'dial-map': one proxy per ordered pair. */
  proxyMode: 'sniff' | 'dial-map';
  command(m: MemberLaunch, extraEnv: Record<string, string>): { bin: string; argv: string[]; env: NodeJS.ProcessEnv };
}

function etcdFlags(m: MemberLaunch): string[] {
  return [
    `--name=${m.name}`,
    `--data-dir=${m.dataDir}`,
    `--listen-client-urls=${m.clientUrl}`,
    `--advertise-client-urls=${m.clientUrl}`,
    `--listen-peer-urls=${m.listenPeerUrl}`,
    `--initial-advertise-peer-urls=${m.advertisePeerUrl}`,
    `--initial-cluster=${m.initialCluster}`,
    `--initial-cluster-state=${m.state}`,
    `--initial-cluster-token=${m.token}`,
    `--heartbeat-interval=${m.heartbeatMs}`,
    `--election-timeout=${m.electionMs}`,
    `--snapshot-count=${m.snapshotCount}`,
  ];
}

export const etcdTarget: Target = {
  name: 'etcd',
  proxyMode: 'sniff',
  command: (m, extraEnv) => ({
    bin: process.env['JEPSEN_ETCD_BIN'] ?? 'etcd',
    argv: [...etcdFlags(m), '--logger=zap', '--log-outputs=stderr'],
    env: { ...process.env, ...extraEnv },
  }),
};

export const setpointTarget: Target = {
  name: 'setpoint',
  proxyMode: 'dial-map',
  command: (m, extraEnv) => ({
    bin: process.execPath,
    argv: [...MEMBER_NODE_FLAGS, path.join(repoRoot(), 'dist', 'src', 'cli', 'main.js'), 'store', ...etcdFlags(m)],
    env: {
      ...process.env,
      ...extraEnv,
      SETPOINT_PEER_DIAL_MAP: [...m.dialMap].map(([adv, dial]) => `${adv}=${dial}`).join(','),
    },
  }),
};

export function targetByName(name: string): Target {
  if (name === 'etcd') return etcdTarget;
  if (name === 'setpoint') return setpointTarget;
  throw new Error(`unknown target ${name} (etcd | setpoint)`);
}
