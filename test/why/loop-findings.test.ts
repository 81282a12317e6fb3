// The loops' records as `why` shows them, and the scheduler's diagnosis trimmed to fit its record.
import { describe, expect, it } from 'vitest';
import { RECORD_MAX_BYTES } from '../../src/apiserver/registry/reconcile-record.js';
import { boundDiagnosis } from '../../src/scheduler/api-sink.js';
import type { SchedulingDiagnosis } from '../../src/scheduler/diagnosis.js';
import { gapText, loopFindings } from '../../src/why/loop-findings.js';
import { loopRecordsOf } from '../../src/why/reconcile-list.js';

const diagnosis = (n: number): SchedulingDiagnosis => ({
  pod: 'default/p',
  message: `0/${n} nodes are available: ${n} Insufficient cpu.`,
  numAllNodes: n,
  reasons: { 'Insufficient cpu': n },
  plugins: { NodeResourcesFit: n },
  nodes: Array.from({ length: n }, (_, i) => ({
    node: `node-${i}`,
    plugin: 'NodeResourcesFit',
    code: 'Unschedulable',
    reasons: ['Insufficient cpu'],
    details: { insufficient: [{ resource: 'cpu', reason: 'Insufficient cpu', requested: 4000, used: 30000, allocatable: 32000 }] },
  })),
  nodesOmitted: 0,
});

describe('boundDiagnosis', () => {
  it('keeps what fits and counts the nodes left out', () => {
    const small = boundDiagnosis(diagnosis(3));
    expect(small.nodes).toHaveLength(3);
    expect(small).not.toHaveProperty('message');
    const big = boundDiagnosis(diagnosis(100));
    expect(Buffer.byteLength(JSON.stringify(big))).toBeLessThanOrEqual(6 * 1024);
    expect(big.nodes.length + big.nodesOmitted).toBe(100);
    expect(big.nodes.length).toBeGreaterThan(10);
    expect(Buffer.byteLength(JSON.stringify(big)) + 2048).toBeLessThan(RECORD_MAX_BYTES);
  });
});

describe('loop findings', () => {
  it('reads the gap as actual/desired and the rest of what the loop saw', () => {
    expect(gapText({ desired: { replicas: 3 }, actual: { replicas: 1, ready: 0 } })).toBe('replicas 1/3, ready 0');
    expect(gapText({ desired: 3, actual: 1 })).toBe('desired 3, actual 1');
  });

  it('makes an error, a warning with the scheduler’s numbers, and an ok', () => {
    const records = loopRecordsOf({
      items: [
        { controller: 'replicaset-controller', gap: { desired: { replicas: 2 }, actual: { replicas: 0 } }, action: 'create 2', outcome: 'error', message: 'FailedCreate: no', since: 't0', count: 4, lastTime: 't1' },
        { controller: 'default-scheduler', gap: { desired: { scheduled: true }, actual: { scheduled: false } }, action: 'wait', outcome: 'waiting', message: 'm', details: { ...boundDiagnosis(diagnosis(7)), feasibility: { pending: 3, couldFit: 1, capacity: 1, eligibleNodes: 7, limitedBy: { cpu: 7 } } }, since: 't0', count: 1, lastTime: 't0' },
        { controller: 'deployment-controller', gap: { desired: { replicas: 2 }, actual: { replicas: 2 } }, action: 'none', outcome: 'ok', since: 't0', count: 9, lastTime: 't2' },
        { controller: 7, outcome: 'bogus' },
      ],
    });
    const f = loopFindings(records);
    expect(f[0]).toEqual({ severity: 'error', source: 'loop', summary: 'replicaset-controller: create 2 failed (replicas 0/2): FailedCreate: no', evidence: { time: 't0', who: 'replicaset-controller', count: 4, message: 'FailedCreate: no' } });
    expect(f.map((x) => x.summary)).toEqual([
      'replicaset-controller: create 2 failed (replicas 0/2): FailedCreate: no',
      'default-scheduler: wait, waiting (scheduled false/true): m',
      'default-scheduler: 0/7 nodes feasible; rejected by NodeResourcesFit on 7',
      ...[0, 1, 2, 3, 4].map((i) => `node node-${i}: NodeResourcesFit: Insufficient cpu (cpu requested 4000, used 30000, allocatable 32000)`),
      '(2 more nodes rejected it)',
      'feasibility: 1 of 3 pending pods of its controller could fit now (room for 1 on 7 eligible nodes; limited by cpu on 7)',
      'deployment-controller: none, ok (replicas 2/2)',
      '7: , waiting (desired , actual )',
    ]);
  });
});
