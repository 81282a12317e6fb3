// percentageOfNodesToScore, as Kubernetes defines it: below 100 nodes all are filtered; otherwise the
// percentage (adaptive when 0: 50 - nodes/125, at least 5) of the nodes, and never fewer than 100.

export const minFeasibleNodesToFind = 100;
export const minFeasibleNodesPercentageToFind = 5;

export function numFeasibleNodesToFind(percentageOfNodesToScore: number, numAllNodes: number): number {
  if (numAllNodes < minFeasibleNodesToFind) return numAllNodes;
  let percentage = percentageOfNodesToScore;
  if (percentage <= 0) {
    percentage = 50 - Math.trunc(numAllNodes / 125);
    if (percentage < minFeasibleNodesPercentageToFind) percentage = minFeasibleNodesPercentageToFind;
  }
  // percentage >= 100 means every node.
  const n = Math.trunc((numAllNodes * Math.min(percentage, 100)) / 100);
  return n < minFeasibleNodesToFind ? minFeasibleNodesToFind : n;
}
