// A member's own account of how long its event loop was held, read from its /metrics (the figures
// src/server/embed/loop-delay.ts keeps): the one way the tests and benchmarks measure a stalled loop.
// Every scrape starts a new window, so a scrape before an operation and one after it bound that operation.

export interface LoopFigures {
  /** The longest the member's own running held its loop, and the longest wall-clock delay (s). */
  readonly held: number;
  readonly wall: number;
}

/** A member's loop figures since its previous scrape (the scrape starts a new window). */
export async function scrapeLoop(url: string): Promise<LoopFigures> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const read = (name: string): number => {
    const m = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
    if (!m) throw new Error(`${name} is not on ${url}/metrics`);
    return Number(m[1]);
  };
  return { held: read('setpoint_event_loop_held_max_seconds'), wall: read('setpoint_event_loop_delay_max_seconds') };
}
