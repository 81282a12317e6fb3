// One control-plane member (`setpoint server`): the store member, the API server on it, the scheduler and
// the controller manager, each its own process so that a busy loop never delays a Raft heartbeat. The API
// server talks to the local store member through the etcd v3 API; the loops talk to the local API server
// with client certificates issued from the cluster CA (failing over to the other members' API servers when
// given), and run only while they hold their Leases, so three members make one HA control plane. Components that crash are restarted (supervised.ts); stop() ends them
// in order: the loops first, then the API server, the store last.
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { writeClientKubeconfig } from '../apiserver/pki/kubeconfig.js';
import { readCertDirCa } from '../apiserver/pki/cert-dir.js';
import { MEMBER_NODE_FLAGS } from '../cli/member-node-flags.js';
import { readyz } from '../harness/kinds/apiserver.js';
import { setpointMain } from '../harness/setpoint-main.js';
import { waitFor } from '../harness/wait.js';
import { Supervised } from './supervised.js';

export interface ControlPlaneMemberOptions {
  readonly dataDir: string;
  /** `setpoint store` flags as given (the member's --data-dir is <dataDir>/store unless given). */
  readonly storeArgs: readonly string[];
  /** The local store member's client URLs, for the API server's --etcd-servers. */
  readonly etcdServers: readonly string[];
  /** `setpoint apiserver` flags as given (--cert-dir defaults to <dataDir>/pki). */
  readonly apiServerArgs: readonly string[];
  readonly securePort: number;
  /** Every member's API server: the loops fail over to the others (this member's own stays first). */
  readonly apiServerEndpoints?: readonly string[];
  readonly certDir?: string;
  /** Flags for both loops (leader election, log level). */
  readonly loopArgs: readonly string[];
  readonly controllerManagerArgs: readonly string[];
  readonly schedulerArgs: readonly string[];
  readonly log: Logger;
  /** Each line a component prints. */
  readonly onLine: (component: string, line: string) => void;
  readonly env?: Readonly<Record<string, string>>;
}

export const COMPONENTS = ['store', 'apiserver', 'scheduler', 'controller-manager'] as const;
export type ComponentName = (typeof COMPONENTS)[number];

function has(args: readonly string[], flag: string): boolean {
  return args.some((a) => a === `--${flag}` || a.startsWith(`--${flag}=`));
}

export class ControlPlaneMember {
  readonly components = new Map<ComponentName, Supervised>();
  readonly certDir: string;

  constructor(private readonly o: ControlPlaneMemberOptions) {
    this.certDir = o.certDir ?? join(o.dataDir, 'pki');
  }

  private component(name: ComponentName, args: readonly string[], nodeArgs: readonly string[] = []): Supervised {
    const s = new Supervised(name, { bin: process.execPath, args: [...nodeArgs, setpointMain(), ...args], env: { ...this.o.env } }, this.o.log, (line) => this.o.onLine(name, line));
    this.components.set(name, s);
    return s;
  }

  /** Starts every component; resolves once the API server is ready and the loops have started. */
  async start(): Promise<void> {
    const o = this.o;
    mkdirSync(o.dataDir, { recursive: true });
    const storeArgs = has(o.storeArgs, 'data-dir') ? o.storeArgs : [...o.storeArgs, `--data-dir=${join(o.dataDir, 'store')}`];
    this.component('store', ['store', ...storeArgs], MEMBER_NODE_FLAGS).start();
    const apiArgs = [
      'apiserver',
      `--etcd-servers=${o.etcdServers.join(',')}`,
      ...(has(o.apiServerArgs, 'cert-dir') ? [] : [`--cert-dir=${this.certDir}`]),
      ...o.apiServerArgs,
    ];
    this.component('apiserver', apiArgs).start();
    // The loops' credentials come from the cluster CA, which the API server makes on its first start.
    const caCert = join(this.certDir, 'ca.crt');
    await waitFor('the API server to be ready', async () => existsSync(caCert) && (await readyz(o.securePort, readFileSync(caCert, 'utf8'))) === 200, {
      timeoutMs: 120_000,
      intervalMs: 200,
    });
    const ca = readCertDirCa(this.certDir);
    const kubeconfigs = join(o.dataDir, 'kubeconfigs');
    mkdirSync(kubeconfigs, { recursive: true });
    const server = `https://127.0.0.1:${o.securePort}`;
    const write = async (file: string, user: string): Promise<string> => {
      const path = join(kubeconfigs, file);
      await writeClientKubeconfig(path, ca, { server, user, ...(o.apiServerEndpoints !== undefined ? { endpoints: o.apiServerEndpoints } : {}) });
      return path;
    };
    const schedulerKc = await write('scheduler.kubeconfig', 'system:kube-scheduler');
    const cmKc = await write('controller-manager.kubeconfig', 'system:kube-controller-manager');
    this.component('scheduler', ['scheduler', `--kubeconfig=${schedulerKc}`, ...o.loopArgs, ...o.schedulerArgs]).start();
    this.component('controller-manager', ['controller-manager', `--kubeconfig=${cmKc}`, ...o.loopArgs, ...o.controllerManagerArgs]).start();
  }

  /** The loops first (they release their Leases), then the API server, the store member last. */
  async stop(): Promise<void> {
    for (const name of [...COMPONENTS].reverse()) await this.components.get(name)?.stop();
  }
}
