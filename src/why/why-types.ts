// What `setpoint why` answers with: for the object asked about and every object below it in its owner
// chain (Deployment → ReplicaSet → Pod → Node), the recorded facts that explain a gap between desired and
// actual — each a Finding with its evidence (when, who, the recorded reason and message) — and a verdict.
// The shape is the `-o json` contract (docs/cli.md).

export type Severity = 'error' | 'warning' | 'info';

/** Where a finding comes from: the object's own records, never a guess. */
export type FindingSource = 'condition' | 'status' | 'stale' | 'event' | 'admission' | 'owner' | 'loop';

export interface Evidence {
  /** When it was recorded (lastTransitionTime, an event's last time, a history entry's time). */
  readonly time?: string;
  /** Who recorded it: a controller, the scheduler, a webhook or plugin, the user of a request. */
  readonly who?: string;
  readonly reason?: string;
  readonly message?: string;
  /** How often (events). */
  readonly count?: number;
  /** Changed or refused fields (admission records). */
  readonly paths?: readonly string[];
}

export interface Finding {
  readonly severity: Severity;
  readonly source: FindingSource;
  /** One line, human. */
  readonly summary: string;
  readonly evidence: Evidence;
}

export interface ObjectRef {
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
}

export interface ObjectReport {
  readonly ref: ObjectRef;
  /** Converged: actual matches desired as far as the recorded status says. */
  readonly converged: boolean;
  /** `2/3 replicas available`, `Pending`, `Ready`. */
  readonly state: string;
  readonly findings: readonly Finding[];
  /** Objects below this one, the owner chain downwards. */
  readonly children: readonly ObjectReport[];
  /** Siblings folded into this report because their findings were the same (pods of one ReplicaSet). */
  readonly alike?: readonly string[];
}

export interface Cause {
  readonly ref: ObjectRef;
  /** Siblings with the same finding. */
  readonly alike: number;
  readonly finding: Finding;
}

export interface WhyReport {
  readonly apiVersion: 'setpoint.io/v1';
  readonly kind: 'WhyReport';
  readonly target: ObjectRef;
  readonly converged: boolean;
  /** The explanation in one line: the state, then the causes. */
  readonly verdict: string;
  /** The recorded reasons below the symptoms: errors on the objects under the target (else on it), else warnings. */
  readonly causes: readonly Cause[];
  readonly generatedAt: string;
  /** False when the API server did not serve the history subresource (an older server, or Forbidden); findings then omit it. */
  readonly historyRead: boolean;
  /** False when the API server did not serve the reconcile subresource; findings then omit the loops' records. */
  readonly loopRecordsRead: boolean;
  readonly tree: ObjectReport;
}
