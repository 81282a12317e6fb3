// One Deployment's reconcile (k/k pkg/controller/deployment: sync.go, rolling.go, recreate.go,
// progress.go), behind a seam of listers and a writer so unit tests run it on Indexers and an actions
// recorder. It claims the ReplicaSets the selector picks, finds or creates the one for the current
// template (`<name>-<pod-template-hash>`), moves replicas between them as the strategy allows, deletes
// ReplicaSets beyond revisionHistoryLimit, and writes status and conditions.
import { labelSelectorAsSelector } from '../../api/label-selector.js';
import { isAlreadyExists } from '../../client/api-status-error.js';
import type { EventRecorder } from '../../client/event-recorder.js';
import type { LoopReport } from '../../client/reconcile-recorder.js';
import { OWNER_INDEX, type Lister } from '../../client/indexer.js';
import { splitKey } from '../../client/kube-object.js';
import type { Deployment, Pod, ReplicaSet } from '../apps-types.js';
import { specReplicas } from '../apps-types.js';
import { claimObjects, controllerRefOf, newControllerRef } from '../controller-ref-manager.js';
import { desiredReplicasOf, maxRevision, replicasAnnotationsNeedUpdate, setNewReplicaSetAnnotations, setReplicasAnnotations, REVISION } from './annotations.js';
import { calculateStatus, getCondition, hasProgressDeadline, newCondition, sameDeploymentStatus, setCondition, PROGRESSING, REASON } from './deployment-status.js';
import { computeHash, equalIgnoreHash, POD_TEMPLATE_HASH } from './pod-template-hash.js';
import { activeReplicaSets, byCreation, byRevision, isRollingUpdate, maxSurge, newRSNewReplicas, proportionalSizes, rsReplicas } from './rollout-math.js';
import { rolloutRecreate } from './recreate.js';
import { rolloutRolling } from './rolling-update.js';

export const DEPLOYMENT_API_VERSION = 'apps/v1';
export const DEPLOYMENT_KIND = 'Deployment';

export interface DeploymentWriter {
  getDeployment(namespace: string, name: string): Promise<Deployment>;
  updateDeploymentStatus(d: Deployment): Promise<Deployment>;
  /** Merge patch of metadata.annotations (the revision: /status does not move metadata). */
  patchDeploymentAnnotations(namespace: string, name: string, annotations: Record<string, string>): Promise<Deployment>;
  getReplicaSet(namespace: string, name: string): Promise<ReplicaSet>;
  createReplicaSet(namespace: string, rs: ReplicaSet): Promise<ReplicaSet>;
  updateReplicaSet(rs: ReplicaSet): Promise<ReplicaSet>;
  deleteReplicaSet(namespace: string, name: string, uid: string): Promise<void>;
  patchReplicaSet(namespace: string, name: string, patch: unknown): Promise<void>;
}

export interface DeploymentSyncDeps {
  readonly deployments: Lister<Deployment>;
  readonly replicaSets: Lister<ReplicaSet>;
  readonly pods: Lister<Pod>;
  readonly writer: DeploymentWriter;
  readonly recorder: EventRecorder;
  readonly wallNow: () => Date;
  /** Each sync's record for `why` (the reconcile subresource); the recorder bounds the writes. */
  readonly loopRecord?: (d: Deployment, report: LoopReport) => void;
}

export interface DeploymentSyncResult {
  readonly requeueAfterMs?: number;
}

/** The state of one sync: the Deployment as last written (it is written several times) and its ReplicaSets. */
export class DeploymentRun {
  requeueAfterMs: number | undefined;
  /** What this sync did to the ReplicaSets, for its record: `create web-abc`, `scale web-abc 1→3`. */
  readonly actions: string[] = [];
  constructor(
    readonly deps: DeploymentSyncDeps,
    public d: Deployment,
    public sets: ReplicaSet[],
  ) {}

  get now(): Date {
    return this.deps.wallNow();
  }

  /** getAllReplicaSetsAndSyncRevision: the new ReplicaSet (created when asked and missing) and all the others. */
  async newAndOld(create: boolean): Promise<{ newRS: ReplicaSet | undefined; old: ReplicaSet[] }> {
    const sorted = [...this.sets].sort(byCreation);
    const existing = sorted.find((rs) => equalIgnoreHash(rs.spec.template, this.d.spec.template));
    const old = sorted.filter((rs) => rs !== existing);
    const newRS = await this.getNewReplicaSet(existing, old, create);
    return { newRS, old };
  }

  private async getNewReplicaSet(existing: ReplicaSet | undefined, old: ReplicaSet[], create: boolean): Promise<ReplicaSet | undefined> {
    const d = this.d;
    const newRevision = maxRevision(old) + 1;
    const surgeMax = specReplicas(d) + maxSurge(d);
    if (existing !== undefined) {
      const copy = structuredClone(existing);
      const annotationsChanged = setNewReplicaSetAnnotations(d, copy, newRevision, true, specReplicas(d), surgeMax);
      const minReadyChanged = (copy.spec.minReadySeconds ?? 0) !== (d.spec.minReadySeconds ?? 0);
      if (annotationsChanged || minReadyChanged) {
        copy.spec.minReadySeconds = d.spec.minReadySeconds ?? 0;
        return this.replaceSet(await this.deps.writer.updateReplicaSet(copy));
      }
      let needsUpdate = this.setRevision(existing.metadata.annotations?.[REVISION] ?? '');
      const status = structuredClone(d.status ?? {});
      if (hasProgressDeadline(d) && getCondition(status, PROGRESSING) === undefined) {
        setCondition(status, newCondition(PROGRESSING, 'True', REASON.foundNewRS, `Found new replica set ${JSON.stringify(existing.metadata.name ?? '')}`, this.now));
        needsUpdate = true;
      }
      if (needsUpdate) await this.writeStatus(status);
      return existing;
    }
    if (!create) return undefined;

    const template = structuredClone(d.spec.template ?? {});
    const hash = computeHash(d.spec.template ?? {}, d.status?.collisionCount);
    template.metadata = { ...template.metadata, labels: { ...template.metadata?.labels, [POD_TEMPLATE_HASH]: hash } };
    const base = structuredClone(d.spec.selector ?? {});
    const sel = { ...base, matchLabels: { ...base.matchLabels, [POD_TEMPLATE_HASH]: hash } };
    const name = `${d.metadata.name ?? ''}-${hash}`;
    const rs: ReplicaSet = {
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: { name, namespace: d.metadata.namespace ?? '', labels: { ...template.metadata.labels }, ownerReferences: [newControllerRef(d, DEPLOYMENT_API_VERSION, DEPLOYMENT_KIND)] },
      spec: { replicas: 0, minReadySeconds: d.spec.minReadySeconds ?? 0, selector: sel, template },
    };
    const replicas = newRSNewReplicas(d, [...old, rs], rs);
    rs.spec.replicas = replicas;
    setNewReplicaSetAnnotations(d, rs, newRevision, false, specReplicas(d), surgeMax);
    let created: ReplicaSet;
    let alreadyExists = false;
    try {
      created = await this.deps.writer.createReplicaSet(rs.metadata.namespace ?? '', rs);
    } catch (e) {
      if (!isAlreadyExists(e)) {
        const msg = `Failed to create new replica set ${JSON.stringify(name)}: ${e instanceof Error ? e.message : String(e)}`;
        if (hasProgressDeadline(d)) {
          const status = structuredClone(d.status ?? {});
          setCondition(status, newCondition(PROGRESSING, 'False', REASON.failedRSCreate, msg, this.now));
          await this.writeStatus(status);
        }
        this.deps.recorder.event(d, 'Warning', REASON.failedRSCreate, msg);
        throw e;
      }
      // Ours already (the cache lagged): use it. Otherwise a hash collision: bump the count and try another name.
      const found = await this.deps.writer.getReplicaSet(rs.metadata.namespace ?? '', name);
      if (controllerRefOf(found)?.uid === d.metadata.uid && equalIgnoreHash(d.spec.template, found.spec.template)) {
        created = found;
        alreadyExists = true;
      } else {
        const status = structuredClone(d.status ?? {});
        status.collisionCount = (status.collisionCount ?? 0) + 1;
        await this.writeStatus(status);
        throw new Error(`found a hash collision for deployment ${JSON.stringify(d.metadata.name ?? '')}: bumping collisionCount to ${status.collisionCount} to resolve it`, { cause: e });
      }
    }
    if (!alreadyExists) this.actions.push(`create replica set ${name}`);
    if (!alreadyExists && replicas > 0) this.deps.recorder.event(d, 'Normal', 'ScalingReplicaSet', `Scaled up replica set ${name} from 0 to ${replicas}`);
    this.sets.push(created);
    const revChanged = this.setRevision(String(newRevision));
    const status = structuredClone(d.status ?? {});
    if (!alreadyExists && hasProgressDeadline(d)) setCondition(status, newCondition(PROGRESSING, 'True', REASON.newRSCreated, `Created new replica set ${JSON.stringify(name)}`, this.now));
    if (revChanged || !alreadyExists) await this.writeStatus(status);
    return created;
  }

  private revisionPending: string | undefined;

  /** SetDeploymentRevision: remembered and written with the next status write. */
  private setRevision(rev: string): boolean {
    if (rev === '' || (this.d.metadata.annotations?.[REVISION] ?? '') === rev) return false;
    this.revisionPending = rev;
    return true;
  }

  /** Writes the Deployment: its revision annotation (if it moved), then its status. */
  async writeStatus(status: Deployment['status']): Promise<void> {
    const ns = this.d.metadata.namespace ?? '';
    const name = this.d.metadata.name ?? '';
    if (this.revisionPending !== undefined) {
      this.d = await this.deps.writer.patchDeploymentAnnotations(ns, name, { [REVISION]: this.revisionPending });
      this.revisionPending = undefined;
    }
    this.d = await this.deps.writer.updateDeploymentStatus({ ...this.d, status: status ?? {} });
  }

  private replaceSet(rs: ReplicaSet): ReplicaSet {
    this.sets = this.sets.map((s) => (s.metadata.uid === rs.metadata.uid ? rs : s));
    return rs;
  }

  /** scaleReplicaSetAndRecordEvent: sets the size and the replicas annotations; an event when the size moved. */
  async scaleReplicaSet(rs: ReplicaSet, size: number): Promise<ReplicaSet> {
    const d = this.d;
    const max = specReplicas(d) + maxSurge(d);
    const sizeChanged = rsReplicas(rs) !== size;
    if (!sizeChanged && !replicasAnnotationsNeedUpdate(rs, specReplicas(d), max)) return rs;
    const copy = structuredClone(rs);
    copy.spec.replicas = size;
    setReplicasAnnotations(copy, specReplicas(d), max);
    const updated = this.replaceSet(await this.deps.writer.updateReplicaSet(copy));
    if (sizeChanged) this.actions.push(`scale ${rs.metadata.name ?? ''} ${rsReplicas(rs)}→${size}`);
    if (sizeChanged) this.deps.recorder.event(d, 'Normal', 'ScalingReplicaSet', `Scaled ${rsReplicas(rs) < size ? 'up' : 'down'} replica set ${rs.metadata.name ?? ''} from ${rsReplicas(rs)} to ${size}`);
    return updated;
  }

  /** scale: a resize while no rollout is under way, or spread proportionally over a rollout. */
  async scale(newRS: ReplicaSet | undefined, old: ReplicaSet[]): Promise<void> {
    const d = this.d;
    const active = activeReplicaSets([newRS, ...old]);
    // FindActiveOrLatest: the one active ReplicaSet, or with none active the new one, else the newest old one.
    let target: ReplicaSet | undefined;
    if (active.length === 1) target = active[0];
    else if (active.length === 0) target = newRS ?? [...old].sort(byCreation).at(-1);
    if (target !== undefined) {
      if (rsReplicas(target) !== specReplicas(d)) await this.scaleReplicaSet(target, specReplicas(d));
      return;
    }
    if (newRS !== undefined && saturated(d, newRS)) {
      for (const rs of activeReplicaSets(old)) await this.scaleReplicaSet(rs, 0);
      return;
    }
    if (!isRollingUpdate(d)) return;
    const sizes = proportionalSizes(d, active);
    for (const rs of active) await this.scaleReplicaSet(rs, sizes.get(rs.metadata.name ?? '') ?? rsReplicas(rs));
  }

  /** cleanupDeployment: deletes the oldest idle ReplicaSets beyond revisionHistoryLimit. */
  async cleanup(old: readonly ReplicaSet[]): Promise<void> {
    const limit = this.d.spec.revisionHistoryLimit;
    if (limit === undefined) return;
    const alive = old.filter((rs) => !rs.metadata.deletionTimestamp);
    const diff = alive.length - limit;
    if (diff <= 0) return;
    for (const rs of [...alive].sort(byRevision).slice(0, diff)) {
      if ((rs.status?.replicas ?? 0) !== 0 || rsReplicas(rs) !== 0 || (rs.metadata.generation ?? 0) > (rs.status?.observedGeneration ?? 0)) continue;
      await this.deps.writer.deleteReplicaSet(rs.metadata.namespace ?? '', rs.metadata.name ?? '', rs.metadata.uid ?? '');
      this.actions.push(`delete replica set ${rs.metadata.name ?? ''}`);
    }
  }

  /** syncDeploymentStatus: status without touching Progressing (scaling and paused syncs). */
  async syncStatus(all: readonly (ReplicaSet | undefined)[], newRS: ReplicaSet | undefined): Promise<void> {
    const status = calculateStatus(all, newRS, this.d, this.now);
    if (sameDeploymentStatus(this.d.status, status) && this.revisionPending === undefined) return;
    await this.writeStatus(status);
  }
}

/** IsSaturated: the new ReplicaSet holds every replica and all of them are available. */
function saturated(d: Deployment, rs: ReplicaSet): boolean {
  return rsReplicas(rs) === specReplicas(d) && desiredReplicasOf(rs) === specReplicas(d) && (rs.status?.availableReplicas ?? 0) === specReplicas(d);
}

/** The sync's record: the replica gap as the Deployment's status has it, what the sync did, and its error. */
export function loopReport(d: Deployment, actions: readonly string[], err: unknown): LoopReport {
  const desired = specReplicas(d);
  const st = d.status ?? {};
  const actual = { replicas: st.replicas ?? 0, updated: st.updatedReplicas ?? 0, ready: st.readyReplicas ?? 0, available: st.availableReplicas ?? 0 };
  const done = actual.replicas === desired && actual.updated === desired && actual.available === desired;
  const stuck = getCondition(st, PROGRESSING);
  const message = err !== undefined ? (err instanceof Error ? err.message : String(err)) : stuck?.status === 'False' ? `${stuck.reason ?? ''}: ${stuck.message ?? ''}` : undefined;
  return {
    ...(d.metadata.generation !== undefined ? { observedGeneration: d.metadata.generation } : {}),
    ...(d.metadata.uid !== undefined ? { uid: d.metadata.uid } : {}),
    gap: { desired: { replicas: desired }, actual },
    action: actions.length > 0 ? actions.join(', ') : d.spec.paused ? 'none (paused)' : done ? 'none' : 'wait',
    outcome: err !== undefined || stuck?.status === 'False' ? 'error' : done ? 'ok' : 'waiting',
    ...(message !== undefined ? { message: message.slice(0, 1024) } : {}),
  };
}

export class DeploymentSync {
  constructor(private readonly deps: DeploymentSyncDeps) {}

  async sync(key: string): Promise<DeploymentSyncResult> {
    const { namespace, name } = splitKey(key);
    const cached = this.deps.deployments.get(namespace, name);
    if (cached === undefined) return {};
    const record = this.deps.loopRecord;
    if (record === undefined) return this.syncOne(key, structuredClone(cached), undefined);
    const state: { run?: DeploymentRun } = {};
    try {
      const r = await this.syncOne(key, structuredClone(cached), state);
      record(state.run?.d ?? cached, loopReport(state.run?.d ?? cached, state.run?.actions ?? [], undefined));
      return r;
    } catch (e) {
      record(state.run?.d ?? cached, loopReport(state.run?.d ?? cached, state.run?.actions ?? [], e));
      throw e;
    }
  }

  private async syncOne(key: string, d: Deployment, state: { run?: DeploymentRun } | undefined): Promise<DeploymentSyncResult> {
    const { namespace, name } = splitKey(key);
    const selector = labelSelectorAsSelector(d.spec.selector);
    if (selector.isEmpty()) {
      this.deps.recorder.event(d, 'Warning', 'SelectingAll', 'This deployment is selecting all pods. A non-empty selector is required.');
      if ((d.status?.observedGeneration ?? 0) < (d.metadata.generation ?? 0)) {
        await this.deps.writer.updateDeploymentStatus({ ...d, status: { ...d.status, ...(d.metadata.generation !== undefined ? { observedGeneration: d.metadata.generation } : {}) } });
      }
      return {};
    }
    const { claimed, errors } = await claimObjects(this.deps.replicaSets.list(namespace), {
      owner: d,
      ownerRef: newControllerRef(d, DEPLOYMENT_API_VERSION, DEPLOYMENT_KIND),
      selector,
      patch: (ns, n, p) => this.deps.writer.patchReplicaSet(ns, n, p),
      canAdopt: async () => {
        const fresh = await this.deps.writer.getDeployment(namespace, name);
        if (fresh.metadata.uid !== d.metadata.uid) throw new Error(`original Deployment ${key} is gone: got uid ${fresh.metadata.uid ?? ''}, wanted ${d.metadata.uid ?? ''}`);
        if (fresh.metadata.deletionTimestamp) throw new Error(`${key} has just been deleted at ${fresh.metadata.deletionTimestamp}`);
      },
    });
    if (errors.length > 0) throw errors[0];
    const run = new DeploymentRun(this.deps, d, claimed);
    if (state !== undefined) state.run = run;

    if (d.metadata.deletionTimestamp) {
      const { newRS, old } = await run.newAndOld(false);
      await run.syncStatus([...old, newRS], newRS);
      return {};
    }
    await this.checkPausedConditions(run);
    if (d.spec.paused) {
      await this.syncScaleOrPaused(run);
      return {};
    }
    if (await this.isScalingEvent(run)) {
      await this.syncScaleOrPaused(run);
      return {};
    }
    if (isRollingUpdate(d)) await rolloutRolling(run);
    else await rolloutRecreate(run, (rs) => this.deps.pods.byIndex(OWNER_INDEX, rs.metadata.uid ?? ''));
    return run.requeueAfterMs !== undefined ? { requeueAfterMs: run.requeueAfterMs } : {};
  }

  /** sync: scale (proportionally when needed), clean up when paused, write status. */
  private async syncScaleOrPaused(run: DeploymentRun): Promise<void> {
    const { newRS, old } = await run.newAndOld(false);
    await run.scale(newRS, old);
    if (run.d.spec.paused) await run.cleanup(old);
    const fresh = await run.newAndOld(false);
    await run.syncStatus([...fresh.old, fresh.newRS], fresh.newRS);
  }

  /** isScalingEvent: an active ReplicaSet was last scaled for a different Deployment size. */
  private async isScalingEvent(run: DeploymentRun): Promise<boolean> {
    const { newRS, old } = await run.newAndOld(false);
    return activeReplicaSets([newRS, ...old]).some((rs) => {
      const desired = desiredReplicasOf(rs);
      return desired !== undefined && desired !== specReplicas(run.d);
    });
  }

  /** checkPausedConditions: Progressing Unknown with DeploymentPaused / DeploymentResumed as paused flips. */
  private async checkPausedConditions(run: DeploymentRun): Promise<void> {
    const d = run.d;
    if (!hasProgressDeadline(d)) return;
    const cond = getCondition(d.status, PROGRESSING);
    if (cond?.reason === REASON.timedOut) return;
    const pausedCond = cond?.reason === REASON.paused;
    const status = structuredClone(d.status ?? {});
    if (d.spec.paused && !pausedCond) setCondition(status, newCondition(PROGRESSING, 'Unknown', REASON.paused, 'Deployment is paused', run.now));
    else if (!d.spec.paused && pausedCond) setCondition(status, newCondition(PROGRESSING, 'Unknown', REASON.resumed, 'Deployment is resumed', run.now));
    else return;
    await run.writeStatus(status);
  }
}
