// The both-leases takeover, for the end-to-end test and `npm run bench:failover`: three `setpoint server`
// members with Setpoint's default leader-election timing, simulated nodes and a Deployment served through
// the first member (the one never killed). A trial hands both loops' Leases to one other member (its peers'
// schedulers and controller managers are paused until it holds both, then resumed), SIGKILLs that member's
// whole process group, times from the kill until identities of other members hold both Leases (as a watch
// of the Lease objects through a surviving API server sees it), scales the Deployment right after the kill
// and waits for it to converge, then restarts the killed member.
import { join } from 'node:path';
import { Informer } from '../client/informer.js';
import type { KubeObject } from '../client/kube-object.js';
import { ResourceClient } from '../client/resource-client.js';
import { DEPLOYMENTS, LEASES, PODS } from '../client/resource-types.js';
import type { RestClient } from '../client/rest-client.js';
import type { Deployment, Pod } from '../controllers/apps-types.js';
import { isPodReady } from '../controllers/pod-readiness.js';
import { ManagedProcess } from './managed-process.js';
import { ServerMembers, type LoopComponent, type ServerMember } from './server-members.js';
import { setpointMain } from './setpoint-main.js';
import { orUndefined, waitFor } from './wait.js';

const LOOP_LEASES: Record<LoopComponent, string> = { scheduler: 'kube-scheduler', 'controller-manager': 'kube-controller-manager' };
const COMPONENTS = Object.keys(LOOP_LEASES) as LoopComponent[];

export interface TakeoverTrial {
  readonly victim: string;
  /** From the SIGKILL until other members' identities held both Leases, as the watch saw it. */
  readonly takeoverSeconds: number;
  /** The members whose loops hold the Leases afterwards, by component. */
  readonly newHolders: Record<LoopComponent, string>;
  /** From the SIGKILL until the later of the two new holders' acquireTime (their clock is this machine's). */
  readonly acquiredSeconds: number;
  /** From the SIGKILL until the Deployment scaled right after it had converged. */
  readonly convergedSeconds: number;
  readonly replicas: number;
}

function holderOf(lease: KubeObject | undefined): string {
  return (lease?.spec as { holderIdentity?: string } | undefined)?.holderIdentity ?? '';
}

function acquireOf(lease: KubeObject | undefined): number {
  return Date.parse((lease?.spec as { acquireTime?: string } | undefined)?.acquireTime ?? '');
}

export class LoopsTakeover {
  private readonly abort = new AbortController();
  private replicas = 1;
  private trials = 0;
  /** Called on every Lease event (the trial's clock reads the time there). */
  private onLease: () => void = () => undefined;

  private constructor(
    readonly members: ServerMembers,
    private readonly home: ServerMember,
    private readonly rest: RestClient,
    private readonly leases: Informer<KubeObject>,
    private readonly agent: ManagedProcess,
  ) {
    leases.addEventHandler({ onAdd: () => this.onLease(), onUpdate: () => this.onLease() });
  }

  static async start(dir: string): Promise<LoopsTakeover> {
    const members = await ServerMembers.start(dir);
    let agent: ManagedProcess | undefined;
    try {
      const home = members.members[0];
      if (home === undefined) throw new Error('no member');
      const rest = members.restOf(home);
      const kubeconfig = await members.kubeconfigOf(home);
      agent = new ManagedProcess(
        'setpoint agent --simulate',
        { bin: process.execPath, args: [setpointMain(), 'agent', `--kubeconfig=${kubeconfig}`, '--simulate=2', '--node-name=sim'], env: { SETPOINT_LOG_FORMAT: 'json' } },
        { logFile: join(dir, 'agent-simulated.log') },
      );
      agent.start();
      const leases = new Informer<KubeObject>(new ResourceClient(rest, LEASES), { namespace: 'kube-system' });
      const rig = new LoopsTakeover(members, home, rest, leases, agent);
      void leases.run(rig.abort.signal).catch(() => undefined);
      await leases.waitForSync(rig.abort.signal);
      await new ResourceClient<Deployment>(rest, DEPLOYMENTS).create({
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'web', namespace: 'default' },
        spec: { replicas: 1, selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'img:1' }] } } },
      } as Deployment);
      await rig.converged(1);
      return rig;
    } catch (e) {
      await agent?.kill('SIGKILL');
      await members.stop();
      throw e;
    }
  }

  private holder(c: LoopComponent): string {
    return holderOf(this.leases.lister.get('kube-system', LOOP_LEASES[c]));
  }

  /** The members other than the one serving the nodes and the measurements, in turn. */
  nextVictim(): ServerMember {
    const others = this.members.members.filter((m) => m !== this.home);
    const v = others[this.trials++ % others.length];
    if (v === undefined) throw new Error('no member to kill');
    return v;
  }

  /** Pauses the other members' loops until `to`'s hold both Leases, resumes them, and waits until they campaign again. */
  async handBothLeasesTo(to: ServerMember): Promise<void> {
    const holdsBoth = (): boolean => COMPONENTS.every((c) => to.identities[c].has(this.holder(c)));
    if (!holdsBoth()) {
      const paused = this.members.members.filter((m) => m !== to).flatMap((m) => COMPONENTS.flatMap((c) => this.members.componentPids(m, c)));
      for (const pid of paused) process.kill(pid, 'SIGSTOP');
      try {
        await waitFor(`${to.name} to hold both Leases`, holdsBoth, { timeoutMs: 60_000 });
      } finally {
        for (const pid of paused) {
          try {
            process.kill(pid, 'SIGCONT');
          } catch {
            // it died meanwhile
          }
        }
      }
    }
    // A resumed loop that led has lost its Lease and exits; its member starts it again after a back-off. A
    // trial starts once every other member's loops run again and, campaigning, have seen `to` lead.
    const others = this.members.members.filter((m) => m !== to);
    await waitFor(
      `the other members' loops campaigning behind ${to.name}`,
      () => others.every((m) => COMPONENTS.every((c) => to.identities[c].has(m.loops[c].sawLeader) && this.members.componentPids(m, c).length > 0)),
      { timeoutMs: 90_000, detail: () => others.map((m) => `${m.name}: ${JSON.stringify(m.loops)}`).join('; ') },
    );
    if (!holdsBoth()) throw new Error(`${to.name} lost a Lease after its peers resumed`);
  }

  /** One trial: both Leases to the next victim, SIGKILL of its group, the takeover, a scale, a restart. */
  async trial(): Promise<TakeoverTrial> {
    const victim = this.nextVictim();
    await this.handBothLeasesTo(victim);
    const gone = (c: LoopComponent): boolean => {
      const h = this.holder(c);
      return h !== '' && !victim.identities[c].has(h);
    };
    let takenAt: number | undefined;
    this.onLease = () => {
      if (takenAt === undefined && COMPONENTS.every(gone)) takenAt = performance.now();
    };
    this.members.killGroup(victim);
    const killedAt = performance.now();
    const killedAtWall = Date.now();
    try {
      const target = ++this.replicas;
      const deployments = new ResourceClient<Deployment>(this.rest, DEPLOYMENTS);
      // The API server may be waiting for the store's new leader: the scale is tried until it lands.
      await waitFor('the scale to land', () => deployments.patchScale('default', 'web', target).then(() => true, () => false), { timeoutMs: 60_000 });
      await waitFor('both Leases taken over', () => takenAt !== undefined, { timeoutMs: 60_000 });
      await this.converged(target);
      const convergedSeconds = (performance.now() - killedAt) / 1000;
      const memberName = (c: LoopComponent): string => this.members.memberOf(this.holder(c))?.name ?? this.holder(c);
      return {
        victim: victim.name,
        takeoverSeconds: ((takenAt ?? killedAt) - killedAt) / 1000,
        acquiredSeconds: (Math.max(...COMPONENTS.map((c) => acquireOf(this.leases.lister.get('kube-system', LOOP_LEASES[c])))) - killedAtWall) / 1000,
        newHolders: { scheduler: memberName('scheduler'), 'controller-manager': memberName('controller-manager') },
        convergedSeconds,
        replicas: target,
      };
    } finally {
      this.onLease = () => undefined;
      await this.members.restart(victim);
    }
  }

  /** The Deployment's status says `replicas` available for its generation, and that many live pods are Ready. */
  private async converged(replicas: number): Promise<void> {
    const deployments = new ResourceClient<Deployment>(this.rest, DEPLOYMENTS);
    const pods = new ResourceClient<Pod>(this.rest, PODS);
    await waitFor(
      `the Deployment at ${replicas} replicas`,
      async () => {
        // A read may fail while the store elects a new leader: it is asked again.
        const d = await orUndefined(deployments.get('default', 'web'));
        const list = await orUndefined(pods.list('default', { labelSelector: 'app=web' }));
        if (d === undefined || list === undefined) return false;
        const s = d.status ?? {};
        const live = list.items.filter((p) => !p.metadata.deletionTimestamp);
        return (s.observedGeneration ?? 0) >= (d.metadata.generation ?? 0) && s.availableReplicas === replicas && live.length === replicas && live.every(isPodReady);
      },
      { timeoutMs: 120_000, intervalMs: 100 },
    );
  }

  async stop(): Promise<void> {
    this.abort.abort();
    await this.agent.kill('SIGKILL');
    await this.members.stop();
  }
}
