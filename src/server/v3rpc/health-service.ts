// grpc.health.v1.Health, as etcd 3.4 registers it: the server as a whole ("") is SERVING while the port
// is open; any other service name is unknown. Load balancers and grpc health probes ask this.
import { status as Status } from '@grpc/grpc-js';
import type { ServerWritableStream, UntypedServiceImplementation } from '@grpc/grpc-js';
import type { EdgeContext } from './edge.js';
import { CallTracker, MethodCounters } from '../grpc/call-metrics.js';
import { StatusError, unary } from './edge.js';

const SERVICE = 'grpc.health.v1.Health';

export function healthService(ctx: EdgeContext): UntypedServiceImplementation {
  const watchCounters = new MethodCounters(ctx.metrics, 'server_stream', SERVICE, 'Watch');
  return {
    Check: unary<{ service: string }, object>(
      ctx,
      SERVICE,
      'Check',
      async (req) => {
        if (req.service !== '') throw new StatusError(Status.NOT_FOUND, 'unknown service');
        return { status: 'SERVING' };
      },
      { learnerOk: () => true },
    ),
    // The status never changes while the port is open: send it once and hold the stream until canceled.
    Watch: (call: ServerWritableStream<{ service: string }, object>) => {
      const t = new CallTracker(watchCounters);
      t.received();
      call.on('cancelled', () => t.done(Status.CANCELLED));
      call.write({ status: call.request.service === '' ? 'SERVING' : 'SERVICE_UNKNOWN' });
      t.sent();
    },
  };
}
