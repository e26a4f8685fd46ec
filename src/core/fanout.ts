/**
 * One reader of a store's change feed, fanning new events out to every subscriber (watches, long polls, SSE): the
 * store polls its feed's version once per period, reads what committed once, and hands each subscriber the events of
 * its type and query. An idle subscriber costs nothing per poll; a subscriber behind the reader reads its own backlog.
 */
import type { ChangeEvent, ChangeFeed } from '../backend.js';
import type { TypeInfo } from '../catalogue/index.js';
import { requestError } from '../envelope.js';
import type { QueryPlan } from '../query/ast.js';
import { FEED_BUFFER_BYTES } from '../settings.js';
import { sleep } from './change-stream.js';

/** Events read at a time. */
export const BATCH = 1000;

/** Events a subscriber may hold unread; past it, it is dropped with CHANGES_OVERFLOW so memory stays bounded. */
export const MAX_BUFFERED = 10_000;

/** Each event's JSON text, made once whatever the number of subscribers holding it (the same objects are handed to all). */
const texts = new WeakMap<object, string>();

/**
 * An event as JSON, serialised once per process: subscribers count its length against their bound, SSE streams send it.
 * @example const bytes = new TextEncoder().encode(`data: ${eventJson(e)}\n\n`);
 */
export function eventJson(e: object): string {
  let text = texts.get(e);
  if (text === undefined) {
    text = JSON.stringify(e);
    texts.set(e, text);
  }
  return text;
}

/** What the reader needs of its store. */
export interface FanoutSource {
  readonly feed: ChangeFeed;
  /** The atomic load holding the store's connection, if any: the feed is read after it. */
  gate(): Promise<unknown> | null;
  closed(): boolean;
  /** Bytes of events (as JSON) a subscriber may hold unread before it is dropped (default FEED_BUFFER_BYTES). */
  bufferBytes?: number;
}

/** Where a subscriber starts: what it filters by, the seq it reads after, how often it wants new events looked for. */
export interface SubscriberStart {
  info: TypeInfo | null;
  plan: QueryPlan | null;
  after: number;
  pollMs: number;
  /** Events it reads of its backlog at a time (default BATCH). */
  batch?: number;
  /** Called when it is dropped (CHANGES_OVERFLOW) or the feed fails, whether or not a `take()` is waiting. */
  onFail?: (e: unknown) => void;
  /** `after` is the feed's head, read when the request was made (no `since`). */
  atHead?: boolean;
}

/**
 * The store's one reader of its feed. Subscribers behind it read their own backlog until they reach its position,
 * then join it: from there on, each commit's events are read once, by it, whatever the number of subscribers.
 * @example const sub = fanout.subscribe({ info, plan: null, after, pollMs: 25 }); const events = await sub.take(10);
 */
export class Fanout {
  readonly #source: FanoutSource;
  /** Subscribers that reached the reader's position: it hands them every new event. */
  readonly #live = new Set<Subscriber>();
  /** Every event up to this seq has been read and handed out (-1: not polling, position unknown). */
  #position = -1;
  #starting: Promise<void> | null = null;
  /** The feed's version at the last look: a new one means something may have committed. */
  #seen = '';
  /** Aborted to wake the poll's sleep when the last subscriber leaves. */
  #halt: AbortController | null = null;
  /** The poll's current sleep: its length, and what cuts it short. */
  #nap: { ms: number; wake: AbortController } | null = null;

  constructor(source: FanoutSource) {
    this.#source = source;
  }

  /** A new subscriber; it reads nothing until its first `take()`. */
  subscribe(start: SubscriberStart): Subscriber {
    return new Subscriber(this, this.#source, start);
  }

  /** Subscribers the reader hands events to (for tests and monitoring). */
  get live(): number {
    return this.#live.size;
  }

  /** Bytes of events its live subscribers hold unread, counted once per subscriber (for tests and monitoring). */
  get buffered(): number {
    let bytes = 0;
    for (const sub of this.#live) bytes += sub.bytes;
    return bytes;
  }

  /** The reader's position, polling started if it was not; -1 once the store closed. */
  async position(): Promise<number> {
    while (this.#position < 0 && !this.#source.closed()) {
      this.#starting ??= this.#start().finally(() => (this.#starting = null));
      await this.#starting;
    }
    return this.#position;
  }

  /** Every event up to this seq was read and handed out; -1 while not polling. */
  get at(): number {
    return this.#position;
  }

  /** Hands `sub` every event past its position from now on, when it has reached the reader's; else false. */
  join(sub: Subscriber): boolean {
    if (this.#position < 0 || sub.after < this.#position) return false;
    this.#live.add(sub);
    sub.joined();
    // A subscriber polling more often than the current sleep: look now, then at its period.
    if (this.#nap && sub.pollMs < this.#nap.ms) this.#nap.wake.abort();
    return true;
  }

  leave(sub: Subscriber): void {
    if (this.#live.delete(sub) && this.#live.size === 0) this.#stop();
  }

  async #start(): Promise<void> {
    const { feed } = this.#source;
    if (!(await ready(this.#source))) return;
    // Remembered before reading the head: a commit in between is read on the first round.
    const seen = await feed.version();
    const { last } = await feed.bounds();
    this.#seen = seen;
    this.#position = last;
    const halt = (this.#halt = new AbortController());
    void this.#poll(halt.signal);
  }

  #stop(): void {
    this.#halt?.abort();
    this.#nap?.wake.abort();
    this.#halt = null;
    this.#nap = null;
    this.#position = -1;
  }

  /** Every period while someone listens: one look at the feed's version, and one read of what committed. */
  async #poll(signal: AbortSignal): Promise<void> {
    try {
      for (;;) {
        const ms = this.#period();
        const nap = (this.#nap = { ms, wake: new AbortController() });
        // One signal per sleep, aborted by a join or by #stop (AbortSignal.any on the long-lived halt would pile up).
        await sleep(ms, nap.wake.signal);
        if (signal.aborted) return;
        // Started for a subscriber that then had its own backlog to read, and left: nobody to read for.
        if (this.#live.size === 0) return this.#stop();
        if (!(await ready(this.#source))) break;
        const version = await this.#source.feed.version();
        if (signal.aborted) return;
        if (version === this.#seen) continue;
        this.#seen = version;
        await this.#drain(signal);
        if (signal.aborted) return;
      }
      this.#endAll(null);
    } catch (e) {
      if (!signal.aborted) this.#endAll(e);
    }
  }

  /** The shortest period a live subscriber asked for; with none yet, the default (25 ms). */
  #period(): number {
    if (this.#live.size === 0) return 25;
    let ms = Infinity;
    for (const s of this.#live) ms = Math.min(ms, s.pollMs);
    return ms;
  }

  /** Reads every event past the position, BATCH at a time, and hands each to the subscribers it matches. */
  async #drain(signal: AbortSignal): Promise<void> {
    const { feed } = this.#source;
    for (;;) {
      if (!(await ready(this.#source)) || signal.aborted) return;
      const from = this.#position;
      const events = await feed.read(from, BATCH, null, null);
      if (signal.aborted || events.length === 0) return;
      const to = events.at(-1)!.seq;
      // Moved before handing out: a subscriber joining meanwhile must have read up to `to` itself.
      this.#position = to;
      await this.#deal(events, from, to);
      if (events.length < BATCH) return;
      // Its subscribers take what they were handed before the next batch: a stream that keeps up is never over its bound.
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  /** Hands the events (from, to] out: by type in JavaScript; by query through one read per distinct query of a type present. */
  async #deal(events: ChangeEvent[], from: number, to: number): Promise<void> {
    const byType = new Map<string, ChangeEvent[]>();
    for (const e of events) {
      const list = byType.get(e.type);
      if (list) list.push(e);
      else byType.set(e.type, [e]);
    }
    const queried = new Map<string, Subscriber[]>();
    for (const sub of [...this.#live]) {
      const mine = sub.info ? byType.get(sub.info.name) : events;
      if (!mine) sub.pass(to);
      else if (sub.plan?.conditions.length) {
        const group = queried.get(sub.key);
        if (group) group.push(sub);
        else queried.set(sub.key, [sub]);
      } else sub.offer(mine, to);
    }
    for (const group of queried.values()) {
      const { info, plan } = group[0]!;
      let matched: ChangeEvent[];
      try {
        // At most BATCH events lie in (from, to], so one read of BATCH holds every match among them.
        matched = (await this.#source.feed.read(from, BATCH, info, plan)).filter((e) => e.seq <= to);
      } catch (e) {
        for (const sub of group) sub.fail(e);
        continue;
      }
      for (const sub of group) sub.offer(matched, to);
    }
  }

  /** Ends every live subscriber: with an error of the feed, or (null) because the store closed. */
  #endAll(e: unknown): void {
    const subs = [...this.#live];
    this.#live.clear();
    this.#stop();
    for (const sub of subs) {
      if (e === null) sub.close();
      else sub.fail(e);
    }
  }
}

/**
 * One reader's view of the feed: the events after its position, of its type and query, in commit order. Behind the
 * store's reader, `take()` reads its backlog itself; level with it, it is handed new events, at most MAX_BUFFERED
 * or its store's `feedBufferBytes` unread before it is dropped.
 */
export class Subscriber {
  readonly info: TypeInfo | null;
  readonly plan: QueryPlan | null;
  readonly pollMs: number;
  /** Subscribers with the same key share one read per batch of new events. */
  readonly key: string;
  /** The seq of the last event buffered or passed over. */
  after: number;
  readonly #fanout: Fanout;
  readonly #source: FanoutSource;
  readonly #batch: number;
  readonly #onFail: ((e: unknown) => void) | undefined;
  readonly #atHead: boolean;
  /** Events held, unread from #head on: taking from the front moves an index, not every event behind it. */
  #buffer: ChangeEvent[] = [];
  #head = 0;
  /** Bytes (as JSON) of the events held unread, and the most it may hold when new events come. */
  #bytes = 0;
  readonly #maxBytes: number;
  #error: unknown = undefined;
  #closed = false;
  /** Handed new events by the store's reader. */
  #live = false;
  /** It read its backlog at least once. */
  #read = false;
  #wake: (() => void) | null = null;

  constructor(fanout: Fanout, source: FanoutSource, start: SubscriberStart) {
    this.#fanout = fanout;
    this.#source = source;
    this.info = start.info;
    this.plan = start.plan;
    this.after = start.after;
    this.pollMs = start.pollMs;
    this.#batch = start.batch ?? BATCH;
    this.#onFail = start.onFail;
    this.#atHead = start.atHead ?? false;
    this.#maxBytes = source.bufferBytes ?? FEED_BUFFER_BYTES;
    this.key = `${start.info?.name ?? ''}\u0000${JSON.stringify(start.plan?.conditions ?? [], planKey)}`;
  }

  /** Events held unread (bounded by MAX_BUFFERED). */
  get buffered(): number {
    return this.#buffer.length - this.#head;
  }

  /** Bytes (as JSON) of the events held unread (at most the store's `feedBufferBytes` and one batch). */
  get bytes(): number {
    return this.#bytes;
  }

  /**
   * At most `limit` events available now: buffered ones, else (while behind the store's reader) one read of its
   * backlog. Empty when there is none yet; rejects once it was dropped or the feed failed.
   */
  async take(limit: number, maxBytes = Infinity): Promise<ChangeEvent[]> {
    if (this.#error !== undefined) throw this.#error;
    // With a query, its first take reads once (a seek past its position), so a query the feed refuses rejects it
    // rather than the first match; without one, a subscriber level with the polling reader joins it without a read.
    if (this.buffered || this.#live || this.#closed) return this.#takeBuffered(limit, maxBytes);
    if (this.#read || !this.plan?.conditions.length) {
      // Started at the feed's head: the reader is started now if it was not (a look at its own head, once per store
      // rather than a read per subscriber), and a commit since makes join() refuse it, leaving it to read that itself.
      if (this.#atHead && this.#fanout.at < 0) await this.#fanout.position();
      if (this.#closed || this.#fanout.join(this)) return this.#takeBuffered(limit, maxBytes);
    }
    if (await ready(this.#source)) await this.#catchUp();
    if (this.#error !== undefined) throw this.#error;
    return this.#takeBuffered(limit, maxBytes);
  }

  /**
   * Up to `limit` buffered events, and no more than reach `maxBytes` of JSON (at least one), in O(limit): a watch takes
   * one at a time from a backlog of up to MAX_BUFFERED.
   */
  #takeBuffered(limit: number, maxBytes: number): ChangeEvent[] {
    let end = Math.min(this.#buffer.length, this.#head + limit);
    let bytes = 0;
    for (let i = this.#head; i < end; i++) {
      bytes += eventJson(this.#buffer[i]!).length;
      if (bytes >= maxBytes) end = i + 1;
    }
    const out = this.#buffer.slice(this.#head, end);
    this.#head = end;
    this.#bytes -= bytes;
    if (this.#head === this.#buffer.length) this.#drop();
    // Compacted once the read part is most of it, so the array's moves stay O(1) per event.
    else if (this.#head > 1024 && this.#head * 2 > this.#buffer.length) {
      this.#buffer = this.#buffer.slice(this.#head);
      this.#head = 0;
    }
    return out;
  }

  /** Lets every buffered event go. */
  #drop(): void {
    this.#buffer = [];
    this.#head = 0;
    this.#bytes = 0;
  }

  /**
   * Resolves when events may be there to take: they arrived, it ended, `ms` passed or `signal` aborted, or (behind
   * the store's reader, which starts polling now if it was not) at once, for `take()` to read on.
   */
  async wait(ms: number, signal?: AbortSignal): Promise<void> {
    if (this.buffered || this.#error !== undefined || this.#closed) return;
    if (!this.#live) {
      await this.#fanout.position();
      if (!this.#fanout.join(this)) return;
    }
    if (this.buffered || this.#error !== undefined || this.#closed || signal?.aborted) return;
    await new Promise<void>((resolve) => {
      // A timer, not an AbortController: aborting one makes a DOMException with a stack, on every wake of every stream.
      const timer = setTimeout(() => done(), ms);
      const done = () => {
        if (this.#wake === done) this.#wake = null;
        signal?.removeEventListener('abort', done);
        clearTimeout(timer);
        resolve();
      };
      this.#wake = done;
      signal?.addEventListener('abort', done, { once: true });
    });
  }

  /** Stops being handed events. */
  close(): void {
    this.#closed = true;
    this.#drop();
    this.#fanout.leave(this);
    this.wake();
  }

  /**
   * Takes the events past its position (already of its type and query) and moves its position to `to`. Past
   * MAX_BUFFERED events, or still holding more than its bound of bytes when new events come, it is dropped
   * (CHANGES_OVERFLOW), its buffer let go: a reader that stalls (a loop that stopped iterating, an SSE client that
   * stopped reading) never grows memory past the bound and one batch.
   */
  offer(events: ChangeEvent[], to: number): void {
    // Bytes are checked once per batch, before it: one commit larger than the bound still reaches a reader that keeps up.
    if (this.#bytes > this.#maxBytes) return this.#overflow();
    let added = false;
    for (const e of events) {
      if (e.seq <= this.after) continue;
      if (this.buffered >= MAX_BUFFERED) return this.#overflow();
      this.#buffer.push(e);
      this.#bytes += eventJson(e).length;
      this.after = e.seq;
      added = true;
    }
    this.pass(to);
    if (added) this.wake();
  }

  #overflow(): void {
    const message = `the change feed's reader fell more than ${MAX_BUFFERED} events or ${this.#maxBytes} bytes behind and was dropped; resume from since=${this.after}`;
    this.fail(requestError('CHANGES_OVERFLOW', message));
  }

  /** Moves its position past events it does not want. */
  pass(to: number): void {
    this.after = Math.max(this.after, to);
  }

  /** Drops it with `e`: its buffer is let go, its next `take()` rejects. */
  fail(e: unknown): void {
    if (this.#error !== undefined) return;
    this.#error = e;
    this.#drop();
    this.#live = false;
    this.#fanout.leave(this);
    this.wake();
    this.#onFail?.(e);
  }

  /** Called by the reader it joined. */
  joined(): void {
    this.#live = true;
  }

  wake(): void {
    this.#wake?.();
  }

  /** One read of its backlog; a short read means every match up to the reader's position (at its start) was read. */
  async #catchUp(): Promise<void> {
    const { feed } = this.#source;
    // Where the reader stands, else the newest committed seq (a seek): either way every event up to it committed.
    const position = this.#fanout.at >= 0 ? this.#fanout.at : (await feed.bounds()).last;
    const events = await feed.read(this.after, this.#batch, this.info, this.plan);
    this.#read = true;
    if (this.#closed) return;
    this.#buffer.push(...events);
    for (const e of events) this.#bytes += eventJson(e).length;
    if (events.length) this.after = events.at(-1)!.seq;
    // Seq order is commit order: the events up to the reader's position that did not match are not scanned again.
    if (events.length < this.#batch) this.after = Math.max(this.after, position);
  }
}

/** True once no atomic load holds the connection (its events are not committed yet), unless the store closed. */
async function ready(source: FanoutSource): Promise<boolean> {
  for (let gate = source.gate(); gate; gate = source.gate()) await gate;
  return !source.closed();
}

/** JSON of a plan's conditions, told apart where JSON alone would merge them (patterns). */
function planKey(_: string, v: unknown): unknown {
  return v instanceof RegExp ? `\u0000/${v.source}/${v.flags}` : v;
}
