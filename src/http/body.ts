/** A request body as it arrives, bounded in size and nesting depth chunk by chunk, before any of it is parsed. */
import { LIMITS } from '../limits.js';
import { BodyError } from './types.js';

/** Levels of a request body above a document's own (the body object, its `body` array, a `$`-operator or two). */
const BODY_LEVELS = 4;
/** Deepest nesting of arrays and objects a request body may have: deeper than any valid document or query needs. */
export const MAX_BODY_DEPTH = LIMITS.depth + BODY_LEVELS;

/**
 * Collects a body's chunks, throwing a BodyError as soon as they cross `limit` bytes (413) or nest arrays and objects
 * deeper than MAX_BODY_DEPTH (400): a hostile `[[[[…` body is refused at its 69th byte, not after it was read whole and
 * JSON.parse spent seconds on it. Brackets inside strings do not count (multi-byte UTF-8 never holds an ASCII byte);
 * malformed JSON is left to JSON.parse.
 * @example const body = new BoundedBody(16 << 20); for await (const c of stream) body.push(c); body.bytes();
 */
export class BoundedBody {
  readonly #limit: number;
  readonly #chunks: Uint8Array[] = [];
  #size = 0;
  #depth = 0;
  #inString = false;
  /** The previous chunk ended on a backslash inside a string: this one's first byte is escaped. */
  #escaped = false;

  constructor(limit: number) {
    this.#limit = limit;
  }

  /** Adds a chunk; throws BodyError past either bound. */
  push(chunk: Uint8Array): void {
    this.#size += chunk.byteLength;
    if (this.#size > this.#limit) throw new BodyError(413, 'too large');
    this.#scan(chunk);
    this.#chunks.push(chunk);
  }

  /** The whole body. */
  bytes(): Uint8Array {
    if (this.#chunks.length === 1) return this.#chunks[0]!;
    const out = new Uint8Array(this.#size);
    let at = 0;
    for (const c of this.#chunks) {
      out.set(c, at);
      at += c.byteLength;
    }
    return out;
  }

  /** One pass over the bytes, no allocation, carrying the state from chunk to chunk. */
  #scan(bytes: Uint8Array): void {
    let depth = this.#depth;
    let inString = this.#inString;
    let i = 0;
    if (this.#escaped) {
      this.#escaped = false;
      i = 1;
    }
    for (; i < bytes.length; i++) {
      const b = bytes[i]!;
      if (inString) {
        if (b === 0x5c) i++; // a backslash: the escaped byte is not a quote
        else if (b === 0x22) inString = false;
      } else if (b === 0x22) inString = true;
      else if (b === 0x5b || b === 0x7b) {
        if (++depth > MAX_BODY_DEPTH) {
          throw new BodyError(400, `nested deeper than ${MAX_BODY_DEPTH} levels; documents and values nest at most ${LIMITS.depth} (LIMITS.depth)`);
        }
      } else if (b === 0x5d || b === 0x7d) depth--;
    }
    // The escape's byte is in the next chunk.
    if (i > bytes.length) this.#escaped = true;
    this.#depth = depth;
    this.#inString = inString;
  }
}
