// What system a run tests: which store program the harness starts for each member (src/harness), how the
// link proxies learn which member dials a peer connection, and what else a member must be told about the
// proxies. Everything else is the same for every target.
import type { StoreProgram } from '../../src/harness/kinds/store-member.js';

export interface Target {
  name: StoreProgram;
  /** 'sniff': one proxy per member, dialer read from HTTP/1.1 headers; 'dial-map': one proxy per ordered pair. */
  proxyMode: 'sniff' | 'dial-map';
  /** Environment for one member, given its map of advertised peer URL → URL of the proxy it must dial instead. */
  memberEnv(dialMap: ReadonlyMap<string, string>): Record<string, string>;
}

export const etcdTarget: Target = {
  name: 'etcd',
  proxyMode: 'sniff',
  memberEnv: () => ({}),
};

export const setpointTarget: Target = {
  name: 'setpoint',
  proxyMode: 'dial-map',
  memberEnv: (dialMap) => ({ SETPOINT_PEER_DIAL_MAP: [...dialMap].map(([adv, dial]) => `${adv}=${dial}`).join(',') }),
};

export function targetByName(name: string): Target {
  if (name === 'etcd') return etcdTarget;
  if (name === 'setpoint') return setpointTarget;
  throw new Error(`unknown target ${name} (etcd | setpoint)`);
}
