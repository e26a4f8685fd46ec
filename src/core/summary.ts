/**
 * The façade's summaries — `aggregate`, `count` and `distinct`, extensions of the service's API: a checked, scoped
 * plan runs as one statement in the backend (src/sql/aggregate.ts), and its answer becomes the envelope.
 */
import type { Backend, SummaryAnswer } from '../backend.js';
import type { TypeInfo } from '../catalogue/index.js';
import { envelope, type Envelope } from '../envelope.js';
import type { SummaryPlan } from '../query/aggregate.js';
import { encodeCursor } from '../query/cursor.js';
import { andThen } from './run.js';

/**
 * The envelope of a summary plan: aggregate rows (`total` the groups, a cursor when a limited page has more after
 * it), distinct values (`total` the values), or a count (`count` and `total` the matches, no data).
 * @example await summarize(backend, info, parseCount(ctx, { basinName: 'Permian' }, undefined)) // { count: 47, total: 47, … }
 */
export function summarize(backend: Backend, info: TypeInfo, plan: SummaryPlan): Envelope<unknown> | Promise<Envelope<unknown>> {
  const answered = backend.summarize(info, plan);
  const issues = [...plan.issues];
  const done = ({ data, total }: SummaryAnswer): Envelope<unknown> => {
    if (plan.kind === 'count') return envelope({ count: total, total, issues });
    if (plan.kind === 'distinct') return envelope({ data, total, issues });
    const next = plan.skip + data.length;
    const more = plan.limit > 0 && data.length > 0 && next < total;
    // The position is the next group's rank in the rows' order: the groups have no insertion order to key on.
    const cursor = more ? encodeCursor(plan.shape, { rank: 0, key: null, seq: next, total }, backend.cursorKey) : null;
    return envelope({ data, total, issues, cursor });
  };
  return andThen(answered, done);
}
