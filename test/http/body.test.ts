/**
 * BoundedBody: a body's size and nesting depth bounded chunk by chunk. However the bytes are split into chunks, the
 * verdict is the one on the whole body: escapes and strings carried across chunk boundaries.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BoundedBody, MAX_BODY_DEPTH } from '../../src/http/body.js';
import { BodyError } from '../../src/http/types.js';

const bytes = (s: string) => new TextEncoder().encode(s);

/** The body fed in the given chunks: its bytes, or the BodyError's status and message. */
function feed(chunks: Uint8Array[], limit = 1 << 20): { bytes: string } | { status: number; message: string } {
  const body = new BoundedBody(limit);
  try {
    for (const c of chunks) body.push(c);
    return { bytes: new TextDecoder().decode(body.bytes()) };
  } catch (e) {
    if (!(e instanceof BodyError)) throw e;
    return { status: e.status, message: e.message };
  }
}

/** `text` cut at the given positions. */
function split(text: string, cuts: number[]): Uint8Array[] {
  const all = bytes(text);
  const at = [...new Set(cuts.map((c) => c % (all.length + 1)))].sort((a, b) => a - b);
  return [...at, all.length].map((end, i) => all.subarray(i ? at[i - 1] : 0, end));
}

describe('BoundedBody', () => {
  it('refuses nesting past MAX_BODY_DEPTH at the first byte past it, naming the bound', () => {
    expect(feed([bytes('['.repeat(MAX_BODY_DEPTH)), bytes(']'.repeat(MAX_BODY_DEPTH))])).toEqual({ bytes: '['.repeat(MAX_BODY_DEPTH) + ']'.repeat(MAX_BODY_DEPTH) });
    expect(feed([bytes('['.repeat(MAX_BODY_DEPTH)), bytes('{')])).toEqual({ status: 400, message: `nested deeper than ${MAX_BODY_DEPTH} levels; documents and values nest at most 64 (LIMITS.depth)` });
  });

  it('refuses a body past its size bound with 413', () => {
    expect(feed([bytes('{"a":'), bytes('1}')], 6)).toEqual({ status: 413, message: 'too large' });
  });

  it('an escaped quote split from its backslash keeps the string open: its brackets do not count', () => {
    const text = `{"a":"\\"${'['.repeat(MAX_BODY_DEPTH + 5)}"}`;
    const at = text.indexOf('\\') + 1;
    expect(feed([bytes(text.slice(0, at)), bytes(text.slice(at))])).toEqual({ bytes: text });
  });

  it('any split of a body gives the verdict on the whole body', () => {
    const piece = fc.oneof(fc.constantFrom('[', ']', '{', '}', '"', '\\', 'a', ',', ':'), fc.string({ maxLength: 3 }));
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 200 }), fc.array(fc.nat(), { maxLength: 6 }), (pieces, cuts) => {
        const text = pieces.join('');
        expect(feed(split(text, cuts))).toEqual(feed([bytes(text)]));
      }),
    );
  });
});
