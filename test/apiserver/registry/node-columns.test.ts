// The STATUS column of `kubectl get nodes`, as Kubernetes' node printer fills it.
import { describe, expect, it } from 'vitest';
import { nodeStrategy } from '../../../src/apiserver/registry/kinds/node.js';
import type { StoredObject } from '../../../src/apiserver/storage/interface.js';

function statusCell(ready: string | undefined, unschedulable = false): unknown {
  const o: StoredObject = {
    metadata: { name: 'n' },
    spec: unschedulable ? { unschedulable: true } : {},
    status: { conditions: ready === undefined ? [] : [{ type: 'Ready', status: ready }] },
  };
  const col = nodeStrategy.columns?.find((c) => c.name === 'Status');
  return col?.cell(o, Date.now());
}

describe('kubectl get nodes STATUS', () => {
  it('is Ready, NotReady for False and for Unknown (a silent node), Unknown with no condition', () => {
    expect(statusCell('True')).toBe('Ready');
    expect(statusCell('False')).toBe('NotReady');
    expect(statusCell('Unknown')).toBe('NotReady');
    expect(statusCell(undefined)).toBe('Unknown');
    expect(statusCell('Unknown', true)).toBe('NotReady,SchedulingDisabled');
  });
});
