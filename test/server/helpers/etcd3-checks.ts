// Checks made with the npm etcd3 client that more than one suite runs, each against its own store.
import { expect } from 'vitest';
import type { Etcd3 } from 'etcd3';

/** A compare-and-swap txn taken both ways: the then branch writes, the else branch reads what it wrote. */
export async function expectCasBothWays(client: Etcd3, key: string): Promise<void> {
  await client.put(key).value('v1');
  const ok = await client.if(key, 'Value', '==', 'v1').then(client.put(key).value('v2')).else(client.get(key)).commit();
  expect(ok.succeeded).toBe(true);
  const no = await client.if(key, 'Value', '==', 'v1').then(client.put(key).value('v3')).else(client.get(key)).commit();
  expect(no.succeeded).toBe(false);
  expect(no.responses[0]?.response_range?.kvs[0]?.value.toString()).toBe('v2');
}
