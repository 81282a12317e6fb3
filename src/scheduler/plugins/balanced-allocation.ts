// NodeResourcesBalancedAllocation: favours nodes whose cpu and memory would be used in equal fractions
// after placing the pod: (1 - std of the fractions) * 100, on actual requests.

import type { CycleState, ScorePlugin } from '../framework.js';
import { maxNodeScore } from '../framework.js';
import type { NodeInfo } from '../node-info.js';
import type { PodInfo } from '../pod-info.js';

export class BalancedAllocation implements ScorePlugin {
  readonly name = 'NodeResourcesBalancedAllocation';

  score(_state: CycleState, pod: PodInfo, node: NodeInfo): number {
    const a = node.allocatable;
    const req = pod.requests.requests;
    const fractions: number[] = [];
    if (a.milliCPU !== 0) fractions.push(Math.min(1, (node.requested.milliCPU + req.milliCPU) / a.milliCPU));
    if (a.memory !== 0) fractions.push(Math.min(1, (node.requested.memory + req.memory) / a.memory));
    let std = 0;
    if (fractions.length === 2) std = Math.abs(((fractions[0] as number) - (fractions[1] as number)) / 2);
    return Math.trunc((1 - std) * maxNodeScore);
  }
}
