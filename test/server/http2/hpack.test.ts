// HPACK (src/server/http2/hpack.ts): RFC 7541's own examples, eviction, the encoder read back, the two
// OK blocks kept in the client's dynamic table, and the decoder's limits on what a block may decode to.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { HpackDecoder, HpackError, OkBlockEncoder, encodeHeaders } from '../../../src/server/http2/hpack.js';
import { GRPC_OK_BLOCKS } from '../../../src/server/grpc/wire-status.js';

const hex = (s: string): Buffer => Buffer.from(s.replace(/\s+/g, ''), 'hex');

describe('HPACK', () => {
  it('decodes RFC 7541 C.3: three requests sharing one dynamic table', () => {
    const d = new HpackDecoder();
    expect(d.decode(hex('8286 8441 0f77 7777 2e65 7861 6d70 6c65 2e63 6f6d')).fields).toEqual([
      [':method', 'GET'],
      [':scheme', 'http'],
      [':path', '/'],
      [':authority', 'www.example.com'],
    ]);
    expect(d.decode(hex('8286 84be 5808 6e6f 2d63 6163 6865')).fields).toEqual([
      [':method', 'GET'],
      [':scheme', 'http'],
      [':path', '/'],
      [':authority', 'www.example.com'],
      ['cache-control', 'no-cache'],
    ]);
    expect(d.decode(hex('8287 85bf 400a 6375 7374 6f6d 2d6b 6579 0c63 7573 746f 6d2d 7661 6c75 65')).fields).toEqual([
      [':method', 'GET'],
      [':scheme', 'https'],
      [':path', '/index.html'],
      [':authority', 'www.example.com'],
      ['custom-key', 'custom-value'],
    ]);
  });

  it('decodes RFC 7541 C.4: the same requests Huffman-coded', () => {
    const d = new HpackDecoder();
    expect(d.decode(hex('8286 8441 8cf1 e3c2 e5f2 3a6b a0ab 90f4 ff')).fields).toContainEqual([':authority', 'www.example.com']);
    expect(d.decode(hex('8286 84be 5886 a8eb 1064 9cbf')).fields).toContainEqual(['cache-control', 'no-cache']);
  });

  it('evicts the oldest entries when the table is full, and refuses references past its end', () => {
    const d = new HpackDecoder(64); // room for one entry of up to 32 bytes of name and value
    const add = (name: string, value: string): Buffer => Buffer.concat([Buffer.from([0x40, name.length]), Buffer.from(name), Buffer.from([value.length]), Buffer.from(value)]);
    d.decode(add('aaaa', 'one'));
    expect(d.decode(hex('be')).fields).toEqual([['aaaa', 'one']]); // index 62: the newest entry
    d.decode(add('bbbb', 'two'));
    expect(d.decode(hex('be')).fields).toEqual([['bbbb', 'two']]);
    expect(() => d.decode(hex('bf'))).toThrow(HpackError); // 'aaaa' was evicted
    expect(() => d.decode(hex('3f e1 1f'))).toThrow(HpackError); // a size update above the announced 64
  });

  it('reads back what the encoder writes, long values and static names included', () => {
    const fields: [string, string][] = [
      [':status', '200'],
      ['content-type', 'application/grpc+proto'],
      ['grpc-message', 'x'.repeat(300)],
      ['custom-bin', 'é\u0001\u00ff'],
    ];
    expect(new HpackDecoder().decode(encodeHeaders(fields)).fields).toEqual(fields);
  });

  it('OK headers and trailers through the client\'s dynamic table: indexes after the first time, literals once the table shrinks', () => {
    const OK_HEADERS = [[':status', '200'], ['content-type', 'application/grpc']];
    const OK_TRAILERS = [['grpc-status', '0']];
    const REFUSAL: [string, string][] = [['grpc-status', '5'], ['grpc-message', 'not found']];
    type Op = { kind: 'headers' } | { kind: 'trailers' } | { kind: 'literal' } | { kind: 'settings'; size: number };
    const op: fc.Arbitrary<Op> = fc.oneof(
      { arbitrary: fc.constant({ kind: 'headers' as const }), weight: 4 },
      { arbitrary: fc.constant({ kind: 'trailers' as const }), weight: 4 },
      { arbitrary: fc.constant({ kind: 'literal' as const }), weight: 2 },
      { arbitrary: fc.oneof(fc.constant(4096), fc.constant(0), fc.integer({ min: 0, max: 8192 })).map((size) => ({ kind: 'settings' as const, size })), weight: 1 },
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 40 }), (ops) => {
        const enc = new OkBlockEncoder(GRPC_OK_BLOCKS);
        const dec = new HpackDecoder(); // the client: one table across the connection
        let smallest = 4096;
        let tableUsed = false; // entries went into the client's table
        let clearDue = false; // the next block must empty it (a size update to 0 first)
        for (const o of ops) {
          if (o.kind === 'settings') {
            enc.peerTableSize(o.size);
            if (o.size < 4096 && smallest === 4096 && tableUsed) clearDue = true;
            smallest = Math.min(smallest, o.size);
            continue;
          }
          if (o.kind === 'headers' && smallest === 4096) tableUsed = true;
          const block = o.kind === 'headers' ? enc.headers() : o.kind === 'trailers' ? enc.trailers() : enc.block(encodeHeaders(REFUSAL));
          expect(block[0] === 0x20).toBe(clearDue);
          clearDue = false;
          expect(dec.decode(block).fields).toEqual(o.kind === 'headers' ? OK_HEADERS : o.kind === 'trailers' ? OK_TRAILERS : REFUSAL);
          // Once the client asked for a smaller table, every block stands alone (no reference into it).
          if (smallest < 4096 && block[0] !== 0x20) expect(new HpackDecoder(smallest).decode(block).fields).toHaveLength(o.kind === 'headers' ? 2 : o.kind === 'trailers' ? 1 : 2);
        }
      }),
      { numRuns: 500 },
    );
    // The steady state is three bytes per call: 0x88 (:status 200), content-type and grpc-status by index.
    const enc = new OkBlockEncoder(GRPC_OK_BLOCKS);
    enc.headers();
    enc.trailers();
    expect([enc.headers(), enc.trailers()]).toEqual([hex('88bf'), hex('be')]);
  });
});

describe('HPACK decoding limits', () => {
  it('stops keeping fields past the pair or size limit but reads the whole block, so the table follows', () => {
    const d = new HpackDecoder();
    // A field added to the table after 200 one-byte fields: still added though the list is over its limits.
    const block = Buffer.concat([Buffer.alloc(200, 0x82), Buffer.from([0x40, 1, 0x78, 1, 0x79])]);
    const r = d.decode(block, 128, 65_535);
    expect(r.tooLarge).toBe(true);
    expect(r.fields).toHaveLength(128);
    expect(d.decode(Buffer.from([0xbe])).fields).toEqual([['x', 'y']]);
    // 32 bytes count per field besides name and value: three fields of 34 are 102, past 100.
    expect(d.decode(Buffer.alloc(4, 0xbe), 128, 100)).toEqual({ fields: [['x', 'y'], ['x', 'y']], tooLarge: true });
    expect(d.decode(Buffer.alloc(3, 0xbe), 128, 102)).toEqual({ fields: [['x', 'y'], ['x', 'y'], ['x', 'y']], tooLarge: false });
  });

  it('still refuses a reference past the table in a block already over its limits (a connection error)', () => {
    expect(() => new HpackDecoder().decode(Buffer.concat([Buffer.alloc(200, 0x82), Buffer.from([0xff, 0x7f])]), 128, 65_535)).toThrow(HpackError);
  });
});

describe('HPACK dynamic table', () => {
  it('matches a plain model of RFC 7541 §4 under random additions, references and size updates', () => {
    const lit = (name: string, value: string): Buffer => Buffer.concat([Buffer.from([0x40, name.length]), Buffer.from(name), Buffer.from([value.length]), Buffer.from(value)]);
    type Op = { add: [string, string] } | { ref: number } | { resize: number };
    const op: fc.Arbitrary<Op> = fc.oneof(
      { weight: 5, arbitrary: fc.tuple(fc.string({ unit: fc.constantFrom('a', 'b', 'c'), maxLength: 20 }), fc.string({ unit: fc.constantFrom('x', 'y'), maxLength: 100 })).map(([n, v]) => ({ add: [`n${n}`, v] as [string, string] })) },
      { weight: 4, arbitrary: fc.nat(40).map((k) => ({ ref: k })) },
      { weight: 1, arbitrary: fc.integer({ min: 0, max: 512 }).map((n) => ({ resize: n })) },
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 200 }), (ops) => {
        const d = new HpackDecoder(512);
        let model: [string, string][] = []; // newest first
        let limit = 512;
        const sizeOf = (t: [string, string][]): number => t.reduce((s, [n, v]) => s + n.length + v.length + 32, 0);
        const shrink = (): void => {
          while (model.length > 0 && sizeOf(model) > limit) model.pop();
        };
        for (const o of ops) {
          if ('add' in o) {
            expect(d.decode(lit(...o.add)).fields).toEqual([o.add]);
            model = [o.add, ...model];
            if (o.add[0].length + o.add[1].length + 32 > limit) model = [];
            shrink();
          } else if ('ref' in o) {
            const want = model[o.ref];
            const block = Buffer.from([0x80 | (62 + o.ref)]);
            if (want) expect(d.decode(block).fields).toEqual([want]);
            else expect(() => d.decode(block)).toThrow(HpackError);
          } else {
            // A size update: 0x20 with a 5-bit prefix integer.
            const n = o.resize;
            const update = n < 31 ? Buffer.from([0x20 | n]) : Buffer.concat([Buffer.from([0x3f]), n - 31 < 128 ? Buffer.from([n - 31]) : Buffer.from([((n - 31) % 128) | 0x80, Math.floor((n - 31) / 128)])]);
            d.decode(update);
            limit = n;
            shrink();
          }
        }
      }),
      { numRuns: 300 },
    );
  });
});
