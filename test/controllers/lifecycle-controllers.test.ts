// The lifecycle controllers' list: each entry is named as the controller it builds names itself, and
// the flags' defaults are Kubernetes' (with --node-monitor-grace-period at 1.32's 50 s).
import { describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { SharedInformerFactory } from '../../src/client/informer-factory.js';
import { realClock } from '../../src/client/clock.js';
import { RestClient } from '../../src/client/rest-client.js';
import type { ControllerContext } from '../../src/controllers/controller.js';
import { lifecycleControllers } from '../../src/controllers/lifecycle-controllers.js';
import { LIFECYCLE_FLAGS, lifecycleOptionsFrom } from '../../src/controllers/lifecycle-flags.js';

describe('lifecycle controllers', () => {
  it('names each entry as its controller names itself', () => {
    const rest = new RestClient({ server: 'http://127.0.0.1:1' });
    const ctx: ControllerContext = { informers: new SharedInformerFactory(rest), rest, clock: realClock, log: pino({ level: 'silent' }), recorderFor: () => ({ event: () => undefined }) };
    for (const { name, factory } of lifecycleControllers()) expect(factory(ctx).name).toBe(name);
    rest.close();
  });

  it('has Kubernetes flag names and defaults, and no --pod-eviction-timeout', () => {
    expect(LIFECYCLE_FLAGS.map((f) => `${f.name}=${f.default}`)).toEqual([
      'node-monitor-grace-period=50s',
      'node-startup-grace-period=1m0s',
      'node-monitor-period=5s',
      'node-eviction-rate=0.1',
      'terminated-pod-gc-threshold=12500',
    ]);
    expect(lifecycleOptionsFrom((f) => (f === 'node-monitor-grace-period' ? 2000 : undefined))).toMatchObject({ nodeMonitorGracePeriodMs: 2000, terminatedPodGcThreshold: 12500, nodeEvictionRate: 0.1 });
  });
});
