/**
 * k-nearest pages read a bounded neighbourhood: a query sorted by distance from its `near` point with a limit reads
 * the matches within a radius r first, growing r until the page and one match more lie within it — then no match
 * beyond r can be nearer — and reading the whole `maxDistance` cap only when r reaches it. One mechanism for every
 * backend: the plan's `reach` (src/sql/compile.ts pageConditions) is all an engine sees of it.
 */
import type { MaybePromise, QueryResult } from '../backend.js';
import type { QueryPlan } from '../query/ast.js';
import { andThen } from './run.js';

/** The first radius (metres, beyond a cursor's distance): a few wells apart in a dense field. */
const FIRST_REACH = 1000;

/** How much more area than the density seen a grown radius takes, so that one step usually suffices. */
const MARGIN = 2;

/**
 * The page of a plan, from `read` (a backend's `query`, or its `queryText`: the pages differ only in how a document is
 * given): through the growing neighbourhood when it is a k-nearest search (its first sort key the distance from a
 * `near` point, ascending, and a limit), else `read`'s page as it is.
 * @example await nearestBy((p) => backend.query(info, p), plan) // the 10 nearest, read from a few hundred metres around the point
 */
export function nearestBy<P extends Pick<QueryResult, 'total' | 'next'> & { data: readonly unknown[] }>(read: (plan: QueryPlan) => MaybePromise<P>, plan: QueryPlan): MaybePromise<P> {
  const key = plan.sort?.keys[0];
  const near = key?.near;
  if (!near || key.order !== 1 || plan.limit === 0) return read(plan);
  const wanted = plan.skip + plan.limit + 1;
  // A later page starts from its cursor's distance; the first from the cap's inner edge.
  const last = plan.after ? Number(plan.after.key) : 0;
  const from = Math.max(near.min, Number.isFinite(last) ? last : 0);
  const step = (reach: number, counted: number | undefined): MaybePromise<P> => {
    if (reach >= near.max) return read(counted === undefined ? plan : { ...plan, counted });
    const attempt = read(counted === undefined ? { ...plan, reach } : { ...plan, reach, counted });
    // A promise resolving to a promise is that promise's value: the async steps chain as the sync ones nest.
    return andThen(attempt, (r): MaybePromise<P> => {
      // One match past the page within r: every match beyond r is farther than all of them.
      if (r.next) return r;
      // A first page holding every match there is: nothing lies beyond.
      if (!plan.after && plan.skip + r.data.length >= r.total) return r;
      // An empty page past a skip tells only that fewer than `skip` lie within r: none seen, for the growth.
      const found = r.data.length ? plan.skip + r.data.length : 0;
      return step(grown(from, reach, found, wanted), plan.after ? undefined : r.total);
    }) as MaybePromise<P>;
  };
  return step(from + Math.max(from, FIRST_REACH), undefined);
}

/**
 * The next radius: the density seen between `from` and `reach` (`found` matches there; area grows with the square of
 * the radius on a small cap) scaled to hold `wanted` with MARGIN, at least twice as wide; four times with none seen.
 */
function grown(from: number, reach: number, found: number, wanted: number): number {
  const width = reach - from;
  if (found === 0) return from + 4 * width;
  return Math.max(from + 2 * width, Math.sqrt(from * from + ((reach * reach - from * from) * MARGIN * wanted) / found));
}
