// A client loop for rollouts: at each check, every pod address the API lists right then is asked over HTTP,
// and how many answered is recorded, until the loop is stopped. "At least N answering at every moment a
// client checks" is then a fact about the recorded list.
import { pause } from '../../../src/harness/wait.js';

/** Starts checking now; stop() ends the loop and gives each check's count of answering pods, in order. */
export function answeringLoop(
  addresses: () => Promise<readonly string[]>,
  answer: (ip: string) => Promise<string | undefined>,
  everyMs = 100,
): { stop(): Promise<number[]> } {
  const counts: number[] = [];
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const ips = (await addresses()).filter((ip) => ip !== '');
      const got = await Promise.all(ips.map((ip) => answer(ip)));
      counts.push(got.filter((g) => g !== undefined).length);
      await pause(everyMs);
    }
  })();
  return {
    stop: async () => {
      stopped = true;
      await loop;
      return counts;
    },
  };
}
