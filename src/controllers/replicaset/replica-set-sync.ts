// One ReplicaSet's reconcile (k/k replica_set.go syncReplicaSet and manageReplicas), behind a seam: it reads
// listers and writes through PodControl and a status writer, so unit tests drive it with an Indexer and an
// actions recorder. Level-based: the gap is always `active owned pods - spec.replicas`, recomputed from the
// cache, and nothing is done for a ReplicaSet whose own creates or deletes are still unobserved.
import type { Logger } from 'pino';
import { labelSelectorAsSelector } from '../../api/label-selector.js';
import type { Selector } from '../../api/labels-selector.js';
import { isApiStatusError, isNotFound } from '../../client/api-status-error.js';
import type { LoopReport } from '../../client/reconcile-recorder.js';
import type { EventRecorder } from '../../client/event-recorder.js';
import { OWNER_INDEX, type Lister } from '../../client/indexer.js';
import { objectKey, splitKey } from '../../client/kube-object.js';
import type { Pod, ReplicaSet, ReplicaSetStatus } from '../apps-types.js';
import { specReplicas } from '../apps-types.js';
import { claimObjects, controllerRefOf, newControllerRef } from '../controller-ref-manager.js';
import { isPodActive } from '../pod-readiness.js';
import { podsToDelete } from './deletion-ranking.js';
import type { Expectations } from './expectations.js';
import { calculateStatus, sameStatus, type ManageFailure } from './replica-set-status.js';
import { slowStartBatch } from './slow-start.js';

/** Kubernetes' BurstReplicas: at most this many creates or deletes per sync. */
export const BURST_REPLICAS = 500;

export interface PodControl {
  createPod(namespace: string, pod: Pod): Promise<Pod>;
  deletePod(namespace: string, name: string, uid: string): Promise<void>;
  /** Merge patch of a pod (adoption and release). */
  patchPod(namespace: string, name: string, patch: unknown): Promise<void>;
}

export interface ReplicaSetWriter {
  /** A fresh read, for canAdopt and conflict retries. */
  get(namespace: string, name: string): Promise<ReplicaSet>;
  updateStatus(rs: ReplicaSet): Promise<ReplicaSet>;
}

export interface ReplicaSetSyncDeps {
  readonly replicaSets: Lister<ReplicaSet>;
  readonly pods: Lister<Pod>;
  readonly podControl: PodControl;
  readonly rsWriter: ReplicaSetWriter;
  readonly expectations: Expectations;
  readonly recorder: EventRecorder;
  readonly wallNow: () => Date;
  readonly burstReplicas?: number;
  readonly log?: Logger;
  /** Each sync's record for `why` (the reconcile subresource); the recorder bounds the writes. */
  readonly loopRecord?: (rs: ReplicaSet, report: LoopReport) => void;
}

export interface SyncResult {
  /** Sync again after this long (minReadySeconds still running for some ready pods). */
  readonly requeueAfterMs?: number;
}

export const RS_API_VERSION = 'apps/v1';
export const RS_KIND = 'ReplicaSet';

/** The pod a ReplicaSet creates from its template (controller.GetPodFromTemplate). */
export function podFromTemplate(rs: ReplicaSet): Pod {
  const t = rs.spec.template ?? {};
  const tm = t.metadata ?? {};
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      generateName: `${rs.metadata.name ?? ''}-`,
      namespace: rs.metadata.namespace ?? '',
      ...(tm.labels ? { labels: { ...tm.labels } } : {}),
      ...(tm.annotations ? { annotations: { ...tm.annotations } } : {}),
      ...(tm.finalizers ? { finalizers: [...tm.finalizers] } : {}),
      ownerReferences: [newControllerRef(rs, RS_API_VERSION, RS_KIND)],
    },
    spec: structuredClone(t.spec ?? {}),
  };
}

function errorMessage(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

export class ReplicaSetSync {
  constructor(private readonly d: ReplicaSetSyncDeps) {}

  async sync(key: string): Promise<SyncResult> {
    const { namespace, name } = splitKey(key);
    const rs = this.d.replicaSets.get(namespace, name);
    if (rs === undefined) {
      this.d.expectations.delete(key);
      return {};
    }
    const needsSync = this.d.expectations.satisfied(key);
    const selector = labelSelectorAsSelector(rs.spec.selector);
    const active = this.d.pods.list(namespace).filter(isPodActive);
    const { claimed, errors } = await this.claimPods(rs, selector, active);
    if (errors.length > 0) throw errors[0];

    let failure: ManageFailure | undefined;
    let manageErr: unknown;
    let action = needsSync ? 'none' : 'wait for pod creates and deletes to be observed';
    if (needsSync && !rs.metadata.deletionTimestamp) {
      const diff = claimed.length - specReplicas(rs);
      const n = Math.min(Math.abs(diff), this.d.burstReplicas ?? BURST_REPLICAS);
      if (diff !== 0) action = `${diff < 0 ? 'create' : 'delete'} ${n}`;
      try {
        await this.manageReplicas(claimed, rs);
      } catch (e) {
        manageErr = e;
        failure = e instanceof ManageError ? e.failure : { reason: 'FailedCreate', message: errorMessage(e) };
      }
    }
    const status = calculateStatus(rs, claimed, failure, this.d.wallNow());
    this.d.loopRecord?.(rs, loopReport(rs, status, action, failure));
    const updated = await this.writeStatus(rs, status);
    if (manageErr !== undefined) throw manageErr;
    const minReady = updated.spec.minReadySeconds ?? 0;
    const st = updated.status;
    if (minReady > 0 && st !== undefined && (st.readyReplicas ?? 0) === specReplicas(updated) && (st.availableReplicas ?? 0) !== specReplicas(updated)) {
      return { requeueAfterMs: minReady * 1000 };
    }
    return {};
  }

  private claimPods(rs: ReplicaSet, selector: Selector, pods: readonly Pod[]): Promise<{ claimed: Pod[]; errors: unknown[] }> {
    return claimObjects(pods, {
      owner: rs,
      ownerRef: newControllerRef(rs, RS_API_VERSION, RS_KIND),
      selector,
      patch: (ns, n, p) => this.d.podControl.patchPod(ns, n, p),
      canAdopt: async () => {
        const fresh = await this.d.rsWriter.get(rs.metadata.namespace ?? '', rs.metadata.name ?? '');
        if (fresh.metadata.uid !== rs.metadata.uid) throw new Error(`original ReplicaSet ${objectKey(rs)} is gone: got uid ${fresh.metadata.uid ?? ''}, wanted ${rs.metadata.uid ?? ''}`);
        if (fresh.metadata.deletionTimestamp) throw new Error(`${objectKey(rs)} has just been deleted at ${fresh.metadata.deletionTimestamp}`);
      },
    });
  }

  private async manageReplicas(pods: readonly Pod[], rs: ReplicaSet): Promise<void> {
    const key = objectKey(rs);
    const ns = rs.metadata.namespace ?? '';
    const burst = this.d.burstReplicas ?? BURST_REPLICAS;
    const diff = pods.length - specReplicas(rs);
    if (diff < 0) {
      const want = Math.min(-diff, burst);
      // Expect them all before the first create, so an informer event for the first pod cannot trigger a second round.
      this.d.expectations.expectCreations(key, want);
      this.d.log?.debug({ replicaSet: key, count: want }, 'creating pods');
      const template = podFromTemplate(rs);
      const res = await slowStartBatch(want, 1, async () => {
        try {
          const created = await this.d.podControl.createPod(ns, structuredClone(template));
          this.d.recorder.event(rs, 'Normal', 'SuccessfulCreate', `Created pod: ${created.metadata.name ?? ''}`);
        } catch (e) {
          this.d.expectations.creationObserved(key);
          // A namespace being deleted refuses creates; that is not the ReplicaSet's failure to report.
          if (isApiStatusError(e, 'Forbidden') && /because it is being terminated/.test(errorMessage(e))) return;
          this.d.recorder.event(rs, 'Warning', 'FailedCreate', `Error creating: ${errorMessage(e)}`);
          throw e;
        }
      });
      // The creates never attempted will never be observed.
      for (let i = res.attempted; i < want; i++) this.d.expectations.creationObserved(key);
      if (res.error !== undefined) throw new ManageError({ reason: 'FailedCreate', message: errorMessage(res.error) }, res.error);
      return;
    }
    if (diff > 0) {
      const n = Math.min(diff, burst);
      const victims = podsToDelete(pods, this.relatedPods(rs), n, this.d.wallNow().getTime());
      this.d.log?.debug({ replicaSet: key, count: n }, 'deleting pods');
      this.d.expectations.expectDeletions(
        key,
        victims.map((p) => objectKey(p)),
      );
      const results = await Promise.allSettled(
        victims.map(async (p) => {
          try {
            await this.d.podControl.deletePod(ns, p.metadata.name ?? '', p.metadata.uid ?? '');
            this.d.recorder.event(rs, 'Normal', 'SuccessfulDelete', `Deleted pod: ${p.metadata.name ?? ''}`);
          } catch (e) {
            this.d.expectations.deletionObserved(key, objectKey(p));
            if (isNotFound(e)) return;
            this.d.recorder.event(rs, 'Warning', 'FailedDelete', `Error deleting: ${errorMessage(e)}`);
            throw e;
          }
        }),
      );
      const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failed !== undefined) throw new ManageError({ reason: 'FailedDelete', message: errorMessage(failed.reason) }, failed.reason);
    }
  }

  /** The active pods of every ReplicaSet with the same controller (the Deployment's), for the node ranking. */
  private relatedPods(rs: ReplicaSet): Pod[] {
    const owner = controllerRefOf(rs);
    const sets = owner === undefined ? [rs] : this.d.replicaSets.byIndex(OWNER_INDEX, owner.uid);
    return sets.flatMap((s) => this.d.pods.byIndex(OWNER_INDEX, s.metadata.uid ?? '')).filter(isPodActive);
  }

  private async writeStatus(rs: ReplicaSet, status: ReplicaSetStatus): Promise<ReplicaSet> {
    if (sameStatus(rs.status, status) && rs.status?.observedGeneration === rs.metadata.generation) return rs;
    let target = rs;
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.d.rsWriter.updateStatus({ ...target, status });
      } catch (e) {
        // As updateReplicaSetStatus: one fresh read after a conflict, then give up to the queue's retry.
        if (attempt > 0 || !isApiStatusError(e, 'Conflict')) throw e;
        target = await this.d.rsWriter.get(rs.metadata.namespace ?? '', rs.metadata.name ?? '');
      }
    }
  }
}

/** The sync's record: the replica gap, what it did, and the FailedCreate/FailedDelete message when it failed. */
export function loopReport(rs: ReplicaSet, status: ReplicaSetStatus, action: string, failure: ManageFailure | undefined): LoopReport {
  const desired = specReplicas(rs);
  const actual = { replicas: status.replicas, ready: status.readyReplicas ?? 0, available: status.availableReplicas ?? 0 };
  const converged = actual.replicas === desired && actual.available === desired;
  return {
    ...(rs.metadata.generation !== undefined ? { observedGeneration: rs.metadata.generation } : {}),
    ...(rs.metadata.uid !== undefined ? { uid: rs.metadata.uid } : {}),
    gap: { desired: { replicas: desired }, actual },
    action,
    outcome: failure !== undefined ? 'error' : converged ? 'ok' : 'waiting',
    ...(failure !== undefined ? { message: `${failure.reason}: ${failure.message}`.slice(0, 1024) } : {}),
  };
}

export class ManageError extends Error {
  readonly code = 'REPLICASET_MANAGE';
  constructor(
    readonly failure: ManageFailure,
    cause: unknown,
  ) {
    super(failure.message, { cause });
    this.name = 'ManageError';
  }
}
