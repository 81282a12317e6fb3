// The etcd client's errors as the storage reports them: a store that cannot answer is Unavailable, a request
// over the store's limit is RequestTooLarge (etcd's message kept); anything else stays what it was.
import { EtcdClientError } from '../../../etcd-client/errors.js';
import { unavailable } from '../errors.js';
import { StorageError } from '../interface.js';

export function fromClientError(e: unknown, key?: string): unknown {
  if (!(e instanceof EtcdClientError)) return e;
  switch (e.code) {
    case 'ETCD_REQUEST_TOO_LARGE':
      return new StorageError('RequestTooLarge', e.message, key);
    case 'ETCD_MESSAGE_TOO_LARGE':
      // grpc-js: "Sent message larger than max" is ours to refuse; a response too large is a fault.
      return /^Sent message/.test(e.message) ? new StorageError('RequestTooLarge', 'etcdserver: request is too large', key) : e;
    case 'ETCD_UNAVAILABLE':
    case 'ETCD_NO_LEADER':
    case 'ETCD_LEADER_CHANGED':
    case 'ETCD_TIMEOUT':
    case 'ETCD_STOPPED':
    case 'ETCD_NOT_CAPABLE':
    case 'ETCD_UNHEALTHY':
    case 'ETCD_TOO_MANY_REQUESTS':
    case 'ETCD_DEADLINE_EXCEEDED':
    case 'ETCD_CLIENT_CLOSED':
      return unavailable(e.message, key);
    default:
      return e;
  }
}
