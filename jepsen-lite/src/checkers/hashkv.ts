// End-of-run agreement: every member's HashKV at one common revision must be equal (etcd's robustness
// tests do the same). Waits for the members to converge on the revision first.
import type { Cluster } from '../cluster.js';
import { errorText } from '../etcd-client.js';
import type { CheckResult } from './result.js';

export async function checkHashKV(cluster: Cluster, timeoutMs = 20_000): Promise<CheckResult> {
  const deadline = Date.now() + timeoutMs;
  const members = cluster.members();
  let lastProblem = '';
  while (Date.now() < deadline) {
    const revs = await Promise.all(members.map((s) => s.admin.status(2000).then((st) => st.revision, (e: unknown) => (lastProblem = `${s.name}: ${errorText(e)}`, -1))));
    if (revs.some((r) => r < 0) || new Set(revs).size !== 1) {
      if (!revs.some((r) => r < 0)) lastProblem = `revisions differ: ${revs.join(' ')}`;
      await new Promise((r) => setTimeout(r, 300));
      continue;
    }
    const rev = revs[0]!;
    try {
      const hashes = await Promise.all(members.map((s) => s.admin.hashKV(rev, 5000)));
      const stats: Record<string, number | string> = { revision: rev };
      members.forEach((s, i) => (stats[s.name] = hashes[i]!.hash.toString(16)));
      const same = new Set(hashes.map((h) => h.hash)).size === 1;
      return {
        name: 'HashKV agrees',
        valid: same,
        stats,
        anomalies: same ? [] : [{ kind: 'hash-mismatch', explanation: [`members disagree on HashKV at revision ${rev}: ${members.map((s, i) => `${s.name}=${hashes[i]!.hash.toString(16)}`).join(', ')}`] }],
      };
    } catch (e) {
      lastProblem = errorText(e);
      await new Promise((r) => setTimeout(r, 300));
    }
  }
  return { name: 'HashKV agrees', valid: 'unknown', stats: {}, anomalies: [{ kind: 'hash-unavailable', explanation: [`could not compare HashKV: ${lastProblem}`] }] };
}
