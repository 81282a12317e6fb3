// A watch's iteration as both implementations make it: a generator whose early end (a `break` in the
// consumer's for-await) stops the watch, so nothing is left running for a reader that went away.
import type { WatchEvent } from './interface.js';

export function stoppingIterator(gen: AsyncGenerator<WatchEvent, void, undefined>, stop: () => void): AsyncIterator<WatchEvent> {
  return {
    next: () => gen.next(),
    return: async () => {
      stop();
      return gen.return(undefined);
    },
  };
}
