/**
 * A query's answer as slices of its envelope's JSON text, taken one at a time: concatenated, the slices are the text
 * `JSON.stringify(await store.query(…))` makes. The pool's worker threads send an answer this way, so a large answer
 * is never held whole (DynamicStore#queryText).
 */
import type { RowStream } from '../backend.js';
import { envelope, type Envelope } from '../envelope.js';

/** How much one slice holds at most: `rows` documents, or about `chars` characters of JSON. */
export interface SliceSize {
  readonly rows: number;
  readonly chars: number;
}

/** The slices of one answer: `next()` until `end`; `close()` lets go of what the answer still holds (a read). */
export interface TextSlices {
  next(): { text: string; end: boolean };
  close(): void;
}

const HEAD = '{"data":[';

/**
 * The envelope builder's own text of a successful answer, cut around the keys an answer of documents sets: the keys
 * between `total` and `issues`, and those after `issues`, are the same in every such answer, so they are made once.
 */
const SAMPLE = JSON.stringify(envelope({ issues: [] }));
const MIDDLE = SAMPLE.slice(SAMPLE.indexOf(',"activityId":'), SAMPLE.indexOf(',"issues":'));
const END = SAMPLE.slice(SAMPLE.indexOf(',"issues":[]') + ',"issues":[]'.length);

/**
 * The text after an answer's documents (`],"cursor":…}`): what `JSON.stringify(envelope({ data, total, issues,
 * cursor }))` ends with for `count` documents, without building and serialising an envelope each answer.
 * @example tailText(1, 1, { issues: [] }) // '],"cursor":null,"hasCursor":false,"empty":false,"count":1,"total":1,"activityId":null,…}'
 */
export function tailText(count: number, total: number, tail: AnswerTail): string {
  const cursor = tail.cursor ?? null;
  const issues = tail.issues.length ? JSON.stringify(tail.issues) : '[]';
  return `],"cursor":${cursor === null ? 'null' : JSON.stringify(cursor)},"hasCursor":${cursor !== null},"empty":${count === 0},"count":${count},"total":${total}${MIDDLE},"issues":${issues}${END}`;
}

/** Slices of a text already whole: about `chars` characters each, never cutting a surrogate pair. */
export function textSlices(text: string, chars: number): TextSlices {
  let at = 0;
  return {
    next() {
      let to = Math.min(text.length, at + chars);
      const last = text.charCodeAt(to - 1);
      // Each slice is encoded alone: half a pair would become a replacement character.
      if (to < text.length && last >= 0xd800 && last <= 0xdbff) to++;
      const slice = text.slice(at, to);
      at = to;
      return { text: slice, end: at >= text.length };
    },
    close() {
      at = text.length;
    },
  };
}

/** The envelope keys an answer's documents do not give: its issues, and the cursor to its next page. */
export interface AnswerTail {
  readonly issues: readonly string[];
  readonly cursor?: string | null;
}

/** A page of documents read already, as a stream of their texts. */
export function listedRows(texts: readonly string[], total: number): RowStream {
  return { rows: texts[Symbol.iterator](), total, close() {} };
}

/**
 * Slices of an answer whose documents are read as they are sliced: `{"data":[` and the first documents, further
 * documents, then the envelope's tail keys from the envelope builder itself. `stored`: each row is a document's text
 * as the backend stores it, which is JSON.stringify's (Backend.queryText), and is sent as it is; otherwise (a
 * projection, a distance, text built in SQL) it is parsed and serialised again.
 * @example rowSlices(backend.stream(info, plan)!, { issues: [] }, { rows: 1000, chars: 1 << 20 }, true)
 */
export function rowSlices(stream: RowStream, tail: AnswerTail, size: SliceSize, stored: boolean): TextSlices {
  let sent = 0;
  let head = HEAD;
  let closed = false;
  const close = () => {
    if (closed) return;
    closed = true;
    stream.close();
  };
  return {
    next() {
      let text = head;
      head = '';
      let count = 0;
      while (count < size.rows && text.length < size.chars) {
        const next = stream.rows.next();
        if (next.done) {
          sent += count;
          close();
          return { text: text + tailText(sent, stream.total ?? sent, tail), end: true };
        }
        // Text built in SQL renders some values otherwise than JSON.stringify (a REAL as 1.0), and the text must be
        // the one the unstreamed envelope serialises to.
        const row = stored ? next.value : JSON.stringify(JSON.parse(next.value));
        text = sent + count === 0 ? text + row : `${text},${row}`;
        count++;
      }
      sent += count;
      return { text, end: false };
    },
    close,
  };
}

/**
 * Every slice's text, taken to the end; the slices are closed after, whatever happens.
 * @example const parts = textsOf(slices); parts.join('') // the envelope's JSON text
 */
export function textsOf(slices: TextSlices): string[] {
  const parts: string[] = [];
  try {
    for (let s = slices.next(); ; s = slices.next()) {
      parts.push(s.text);
      if (s.end) break;
    }
  } finally {
    slices.close();
  }
  return parts;
}

/**
 * The slices of an answer read to their end now, and the read they came from closed: for a connection that serves
 * other requests while the answer is written (one thread), where a read left open would take their statements.
 * @example const whole = drained(rowSlices(stream, tail, size, true)); // the stream is closed already
 */
export function drained(slices: TextSlices): TextSlices {
  const parts = textsOf(slices);
  let at = 0;
  return {
    next: () => ({ text: parts[at++] ?? '', end: at >= parts.length }),
    close() {
      at = parts.length;
    },
  };
}

/**
 * Slices of an envelope already built, its documents serialised one at a time as they are sliced: an answer of any
 * size is never one string (a string has a maximum length; a whole answer can pass it).
 * @example envelopeSlices(await store.query('Well', {}), { rows: 1000, chars: 1 << 20 })
 */
export function envelopeSlices(env: Envelope<unknown>, size: SliceSize): TextSlices {
  if (!env.success || env.data.length === 0) return textSlices(JSON.stringify(env), size.chars);
  const data = env.data;
  const rows = (function* () {
    for (const doc of data) yield JSON.stringify(doc);
  })();
  return rowSlices({ rows, total: env.total, close() {} }, { issues: env.issues, cursor: env.cursor }, size, true);
}
