// DefaultPreemption's PostFilter: which nodes preemption could help on (those a plugin rejected as
// Unschedulable, not UnschedulableAndUnresolvable), whether each has lower-priority victims whose removal
// lets the pod fit, and Kubernetes' message when none does ("preemption: 0/N nodes are available: ...").
// When a node does, the pod is nominated there with the fewest, lowest-priority victims.

import { CycleState } from './framework.js';
import { fitErrorMessage, newDiagnosis } from './fit-error.js';
import type { NodeInfo } from './node-info.js';
import type { PodInfo } from './pod-info.js';
import type { Profile } from './profile.js';
import { Snapshot } from './snapshot.js';
import { Status, unresolvable } from './status.js';

export interface PreemptionOutcome {
  /** The message the FitError carries after its own ("preemption: ..."), empty when a node was nominated. */
  readonly message: string;
  readonly nominatedNodeName?: string;
  readonly victims?: readonly PodInfo[];
}

interface Candidate {
  readonly node: string;
  readonly victims: PodInfo[];
}

function fitsOn(profile: Profile, pod: PodInfo, snapshot: Snapshot, node: NodeInfo): Status | null {
  const sim = new Snapshot(snapshot.list.map((n) => (n.name === node.name ? node : n)));
  const state = new CycleState();
  const pre = profile.runPreFilter(state, pod, sim);
  if (pre.status !== null) return pre.status;
  return profile.runFilter(state, pod, node);
}

function selectVictims(profile: Profile, pod: PodInfo, snapshot: Snapshot, ni: NodeInfo): { victims?: PodInfo[]; status: Status | null } {
  const sim = ni.clone();
  const lower = sim.pods.filter((p) => p.priority < pod.priority);
  if (lower.length === 0) return { status: unresolvable('No preemption victims found for incoming pod') };
  for (const p of lower) sim.removePod(p.key);
  const st = fitsOn(profile, pod, snapshot, sim);
  if (st !== null) return { status: st };
  // Reprieve the most important pods first; whoever cannot come back is a victim.
  lower.sort((a, b) => b.priority - a.priority);
  const victims: PodInfo[] = [];
  for (const p of lower) {
    sim.addPod(p);
    if (fitsOn(profile, pod, snapshot, sim) !== null) {
      sim.removePod(p.key);
      victims.push(p);
    }
  }
  return { victims, status: null };
}

// pickOneNodeForPreemption, without PDBs: the lowest highest-priority victim, then the lowest priority
// sum, then the fewest victims, then the first.
function better(a: Candidate, b: Candidate): boolean {
  const top = (c: Candidate): number => Math.max(...c.victims.map((v) => v.priority));
  const sum = (c: Candidate): number => c.victims.reduce((s, v) => s + v.priority, 0);
  if (top(a) !== top(b)) return top(a) < top(b);
  if (sum(a) !== sum(b)) return sum(a) < sum(b);
  return a.victims.length < b.victims.length;
}

export function preempt(profile: Profile, pod: PodInfo, snapshot: Snapshot, nodeToStatus: ReadonlyMap<string, Status>): PreemptionOutcome {
  if (pod.pod.spec.preemptionPolicy === 'Never') return { message: 'not eligible due to preemptionPolicy=Never.' };
  const d = newDiagnosis();
  d.absentStatus = unresolvable('Preemption is not helpful for scheduling');
  const candidates: Candidate[] = [];
  for (const ni of snapshot.list) {
    const st = nodeToStatus.get(ni.name);
    if (st === undefined || st.code !== 'Unschedulable') continue;
    const r = selectVictims(profile, pod, snapshot, ni);
    if (r.status === null && r.victims !== undefined && r.victims.length > 0) candidates.push({ node: ni.name, victims: r.victims });
    else d.nodeToStatus.set(ni.name, r.status ?? new Status('Error', [`expected at least one victim pod on node "${ni.name}"`]));
  }
  if (candidates.length === 0) return { message: `preemption: ${fitErrorMessage(snapshot.numNodes, d)}` };
  let best = candidates[0] as Candidate;
  for (const c of candidates) if (better(c, best)) best = c;
  return { message: '', nominatedNodeName: best.node, victims: best.victims };
}
