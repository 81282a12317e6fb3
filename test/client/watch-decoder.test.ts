import { describe, expect, it } from 'vitest';
import { WatchDecoder } from '../../src/client/watch-decoder.js';

describe('WatchDecoder', () => {
  it('joins events split across chunks at any byte', () => {
    const text = '{"type":"ADDED","object":{"a":"é"}}\n{"type":"DELETED","object":{"b":2}}\n';
    const bytes = Buffer.from(text);
    for (let cut = 1; cut < bytes.length; cut++) {
      const d = new WatchDecoder();
      const evs = [...d.push(bytes.subarray(0, cut)), ...d.push(bytes.subarray(cut)), ...d.end()];
      expect(evs.map((e) => e.type)).toEqual(['ADDED', 'DELETED']);
      expect(evs[0]?.object).toEqual({ a: 'é' });
    }
  });

  it('refuses a malformed event, an unknown type and an over-long line', () => {
    expect(() => new WatchDecoder().push(Buffer.from('nope\n'))).toThrow(/malformed/);
    expect(() => new WatchDecoder().push(Buffer.from('{"type":"X","object":{}}\n'))).toThrow(/unknown event type/);
    expect(() => new WatchDecoder(10).push(Buffer.from('{"type":"ADDED"'))).toThrow(/larger than 10/);
  });
});
