/** The one SQL backend: operations as generators run by a synchronous or an async runner, the retry policy, and SQLite's driver. */
import { describe, expect, it } from 'vitest';
import { parsePlan } from '../src/query/parse.js';
import { resolveSettings } from '../src/settings.js';
import { RequestError } from '../src/envelope.js';
import { call, runAsync, runSync, SqlBackend, type Driver, type Op, type PageRows, type Retry } from '../src/sql/backend.js';
import type { Select } from '../src/sql/compile.js';
import type { QueryPlan } from '../src/query/ast.js';
import type { Compiled } from '../src/sql/fragment.js';
import { sqlite } from '../src/sqlite/dialect.js';
import { SqliteBackend } from '../src/sqlite/backend.js';
import { requestError } from '../src/envelope.js';
import { DataStore } from '../src/index.js';
import { SQLITE_SUMMARY } from '../src/sqlite/aggregate.js';

const settings = resolveSettings({}, 'test');
const well = settings.catalogue.resolve('Well')!;
const all = parsePlan({ type: well, strict: true }, { pwi: 'W1' }, null);

function* twice(answer: unknown): Op<unknown[]> {
  const a = yield* call(answer);
  let b: unknown;
  try {
    b = yield* call(Promise.reject(new Error('refused')));
  } catch (e) {
    b = (e as Error).message;
  }
  return [a, b];
}

describe('runners', () => {
  it('runSync gives each answer straight back; runAsync awaits it and throws a rejection into the step that yielded it', async () => {
    function* sync(): Op<number> {
      return (yield* call(2)) + (yield* call(3));
    }
    expect(runSync(sync())).toBe(5);
    await expect(runAsync(twice(Promise.resolve('one')))).resolves.toEqual(['one', 'refused']);
  });
});

/** A driver whose statements fail with `failures` (one a call, in order) before they answer 1. */
class FakeDriver implements Driver<null> {
  calls = 0;
  readonly attempts = 3;
  readonly alone = true;
  constructor(readonly failures: unknown[]) {}
  /** Operations run: a request's retry policy, and the operation inside it unless the request is one step. */
  runs = 0;
  client<T>(fn: (s: null) => T): T {
    return fn(null);
  }
  run<T>(op: Op<T>): T {
    this.runs++;
    return runSync(op);
  }
  all(_s: null, _c: Compiled | string): unknown[][] {
    return [];
  }
  changes(_s: null, _c: Compiled): number {
    this.calls++;
    const e = this.failures.shift();
    if (e) throw e;
    return 1;
  }
  begin(): void {}
  commit(): void {}
  rollback(): void {}
  retry(e: unknown): Retry {
    return (e as { retry?: Retry }).retry ?? null;
  }
  locked() {
    return requestError('INTERNAL', 'still locked');
  }
  refusal(e: unknown) {
    return (e as { full?: boolean }).full ? requestError('STORE_FULL', 'full') : undefined;
  }
  uniqueKey() {
    return null;
  }
}

class FakeBackend extends SqlBackend<null, true> {
  readonly capabilities = { cursors: false, stream: false, bulk: false, feed: false };
  protected readonly dialect = sqlite;
  protected readonly changesTable = '"cd_changes"';
  protected readonly metaTable = '"cd_meta"';
  constructor(
    readonly fake: FakeDriver,
    beforeCommit?: () => boolean,
  ) {
    super({ beforeCommit });
  }
  protected get driver() {
    return this.fake;
  }
  protected table(type: string) {
    return { name: `"docs_${type}"` };
  }
  protected where() {
    return 'true';
  }
  protected feedWhere() {
    return 'true';
  }
  protected *lastGiven(): Op<number> {
    return 0;
  }
  protected uniqueFields() {
    return [];
  }
  protected readonly pageColumns = [0, 1, 2, 3] as const;
  protected readonly parse = <R>(_info: unknown, rows: readonly R[], text: (r: R) => unknown) => rows.map((r) => JSON.parse(text(r) as string) as { id: string });
  protected readonly summaryHooks = SQLITE_SUMMARY;
  protected select(_info: unknown, plan: QueryPlan, where: unknown): Select {
    this.wheres.push(where);
    const paged = plan.limit > 0 || plan.skip > 0;
    return { sql: 'page', params: [], countSql: 'count', countParams: [], paged, keyed: plan.limit > 0 };
  }
  /** What the page statement answers, and the `counting` each read was asked with. */
  answer: PageRows = { rows: [] };
  readonly countings: boolean[] = [];
  readonly wheres: unknown[] = [];
  protected pageRows(_s: null, _info: unknown, _plan: unknown, _select: unknown, counting: boolean): PageRows {
    this.countings.push(counting);
    return { rows: [...this.answer.rows], total: this.answer.total };
  }
  protected explainText(): string[] {
    return ['SCAN'];
  }
}

const codeOf = (fn: () => unknown) => {
  try {
    fn();
  } catch (e) {
    return e instanceof RequestError ? e.errors[0]!.code : (e as Error).message;
  }
  return 'answered';
};

describe('the retry policy, once for every engine', () => {
  it('a lock wait is run again up to the attempts, then answers the driver’s locked error', () => {
    const locked = { retry: 'locked' };
    const twiceLocked = new FakeDriver([locked, locked]);
    expect(new FakeBackend(twiceLocked).delete(well, all)).toBe(1);
    expect(twiceLocked.calls).toBe(3);
    const alwaysLocked = new FakeDriver([locked, locked, locked]);
    expect(codeOf(() => new FakeBackend(alwaysLocked).delete(well, all))).toBe('INTERNAL');
    expect(alwaysLocked.calls).toBe(3);
  });

  it('an error the engine will not take back is thrown at once, as the request error it means when it means one', () => {
    const full = new FakeDriver([{ full: true }]);
    expect(codeOf(() => new FakeBackend(full).delete(well, all))).toBe('STORE_FULL');
    expect(full.calls).toBe(1);
    const other = new FakeDriver([new Error('boom')]);
    expect(codeOf(() => new FakeBackend(other).delete(well, all))).toBe('boom');
    expect(other.calls).toBe(1);
  });
});

describe('beforeCommit, asked once a write request has done its work', () => {
  it('false rolls the write back and answers TIMEOUT; a single statement then runs in a transaction too', () => {
    const driver = new FakeDriver([]);
    const ends: string[] = [];
    driver.begin = () => void ends.push('begin');
    driver.commit = () => void ends.push('commit');
    driver.rollback = () => void ends.push('rollback');
    let asked = 0;
    expect(codeOf(() => new FakeBackend(driver, () => (asked++, false)).delete(well, all))).toBe('TIMEOUT');
    expect([asked, driver.calls, ends]).toEqual([1, 1, ['begin', 'rollback']]);
    ends.length = 0;
    expect(new FakeBackend(driver, () => true).delete(well, all)).toBe(1);
    expect(ends).toEqual(['begin', 'commit']);
  });

  it('on SQLite a write refused at the gate leaves nothing, and the next one commits', () => {
    let open = false;
    const backend = new SqliteBackend(':memory:', resolveSettings({ beforeCommit: () => open }, 'test'));
    try {
      expect(codeOf(() => backend.insert(well, [{ id: 'a', pwi: 'A' }], false))).toBe('TIMEOUT');
      expect(backend.database.inTransaction).toBe(false);
      expect(backend.database.prepare('SELECT count(*) FROM "docs_Well"').pluck().get()).toBe(0);
      open = true;
      expect(backend.insert(well, [{ id: 'a', pwi: 'A' }], false).insertedIds).toEqual(['a']);
      expect(backend.database.prepare('SELECT count(*) FROM "docs_Well"').pluck().get()).toBe(1);
    } finally {
      backend.close();
    }
  });

  it('must be a function', () => {
    expect(() => resolveSettings({ beforeCommit: true as never }, 'open')).toThrow(/beforeCommit must be a function/);
  });
});

describe('beforeCommit and the activity log', () => {
  it('a refusal of a request the host gave up on is not logged, and nothing goes to onError', async () => {
    const errors: unknown[] = [];
    const store = DataStore.open(':memory:', { activityLog: true, beforeCommit: () => false, onError: (e) => errors.push(e) });
    try {
      const refused = await store.dynamic.insert('Well', [{ pwi: 'W1', fracStages: 'many' }]);
      expect(refused.errors.map((e) => e.code)).toEqual(['VALIDATION']);
      expect(errors).toEqual([]);
      expect(store.database.prepare('SELECT count(*) FROM "docs_ActivityLog"').pluck().get()).toBe(0);
    } finally {
      await store.close();
    }
  });
});

/** A driver that counts `matches` and records the statements and transactions a read runs. */
class CountingDriver extends FakeDriver {
  readonly ran: string[] = [];
  constructor(readonly matches: number) {
    super([]);
    this.begin = () => void this.ran.push('begin');
    this.commit = () => void this.ran.push('commit');
  }
  override all(_s: null, c: Compiled | string): unknown[][] {
    this.ran.push(typeof c === 'string' ? c : c.sql);
    return [[this.matches]];
  }
}

/** One keyed row of the fake page statement: its document, seq, rank and key. */
const row = (n: number) => [JSON.stringify({ id: `W${n}` }), n, 1, `k${n}`];

describe('the page, once for every engine', () => {
  const limited = (options: Record<string, unknown>, extra: Partial<QueryPlan> = {}): QueryPlan => ({ ...parsePlan({ type: well, strict: true }, { pwi: 'W1' }, options), ...extra });
  const read = (plan: QueryPlan, page: PageRows, matches = 42) => {
    const driver = new CountingDriver(matches);
    const backend = new FakeBackend(driver);
    backend.answer = page;
    const result = backend.query(well, plan) as Awaited<ReturnType<FakeBackend['query']>>;
    return { result, ran: driver.ran, countings: backend.countings, runs: driver.runs };
  };

  it('one row past the limit: the page ends at the limit, counted in the page’s snapshot, and the next page starts after its last row', () => {
    const { result, ran, countings } = read(limited({ limit: 2 }), { rows: [row(1), row(2), row(3)] });
    expect(result).toEqual({ data: [{ id: 'W1' }, { id: 'W2' }], total: 42, next: { rank: 1, key: 'k2', seq: 2, total: 42 } });
    expect([ran, countings]).toEqual([['begin', 'count', 'commit'], [true]]);
  });

  it('a page ending before the limit is the last: its total is the skip and its rows, and no count runs', () => {
    const { result, ran } = read(limited({ limit: 5, skip: 3 }), { rows: [row(4), row(5)] });
    expect(result).toEqual({ data: [{ id: 'W4' }, { id: 'W5' }], total: 5, next: null });
    expect(ran).toEqual(['begin', 'commit']);
  });

  it('an empty page after a skip may be past the end: it is counted', () => {
    expect(read(limited({ limit: 5, skip: 50 }), { rows: [] }).result).toEqual({ data: [], total: 42, next: null });
    expect(read(limited({ skip: 50 }), { rows: [] }).result).toEqual({ data: [], total: 42, next: null });
  });

  it('a k-nearest neighbourhood (reach) is counted even when its page ends before the limit: matches lie beyond it', () => {
    expect(read(limited({ limit: 5 }, { reach: 1000 }), { rows: [row(1)] }).result.total).toBe(42);
  });

  it('a cursor’s total (or a counted search’s) is carried: nothing is counted, in no snapshot of its own', () => {
    const after = { rank: 1, key: 'k2', seq: 2, total: 7 };
    const { result, ran, countings } = read(limited({ limit: 1 }, { after }), { rows: [row(3), row(4)] });
    expect(result).toEqual({ data: [{ id: 'W3' }], total: 7, next: { rank: 1, key: 'k3', seq: 3, total: 7 } });
    expect([ran, countings]).toEqual([[], [false]]);
    expect(read(limited({ limit: 1 }, { counted: 9 }), { rows: [row(1)] }).result.total).toBe(9);
  });

  it('a total the page statement counted is taken as it is', () => {
    const { result, ran } = read(limited({ limit: 5, skip: 50 }), { rows: [], total: 12 });
    expect([result.total, ran]).toEqual([12, ['begin', 'commit']]);
  });

  it('without limit or skip every match is the page: no count, no snapshot, one step (no operation inside the retry policy)', () => {
    const { result, ran, runs } = read(limited({}), { rows: [JSON.stringify({ id: 'W1' })] });
    expect([result, ran, runs]).toEqual([{ data: [{ id: 'W1' }], total: 1, next: null }, [], 1]);
    expect(read(limited({ limit: 5 }), { rows: [] }).runs).toBe(2);
  });
});
