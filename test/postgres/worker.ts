/**
 * A writer process for test/postgres/concurrency.test.ts, one of several on one PostgreSQL schema.
 * argv: url, schema, worker number, seed. Every acknowledged write is printed, so the test can find each one:
 *   ack insert <pwi> <id> | dup <pwi> | ack update <pwi> <key> | ack set <pwi> <field> <value> | ack replace <id> |
 *   error <what> | done
 */
import { openPostgres } from '../../src/postgres/index.js';

const [url, schema, workerArg, seedArg] = process.argv.slice(2);
const worker = Number(workerArg);
let state = Number(seedArg) >>> 0 || 1;
/** A small seeded PRNG (xorshift32): each worker visits the shared keys in its own order. */
const random = () => {
  state ^= state << 13;
  state >>>= 0;
  state ^= state >>> 17;
  state ^= state << 5;
  state >>>= 0;
  return state / 2 ** 32;
};
const shuffled = <T>(xs: T[]): T[] => {
  const a = [...xs];
  for (let i = a.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [a[i], a[j]] = [a[j]!, a[i]!];
  }
  return a;
};
const say = (line: string) => process.stdout.write(`${line}\n`);

export const KEYS = 200;
export const SHARED = 5;
export const UPDATES = 40;
export const REPLACED = 20;

const store = await openPostgres(url!, { schema: schema!, userId: `w${worker}`, pool: { max: 2 } });
try {
  // Colliding keys: every worker inserts every K pwi, in batches of 10 in its own order; one insert of each may win.
  const pwis = shuffled(Array.from({ length: KEYS }, (_, i) => `K-${i}`));
  for (let b = 0; b < pwis.length; b += 10) {
    const batch = pwis.slice(b, b + 10);
    const r = await store.insert('Well', batch.map((pwi) => ({ pwi, extra: { by: worker } })));
    const refused = new Set(r.errors.filter((e) => e.code === 'DUPLICATE_KEY').map((e) => e.index));
    if (r.errors.some((e) => e.code !== 'DUPLICATE_KEY')) say(`error insert ${JSON.stringify(r.errors)}`);
    let k = 0;
    batch.forEach((pwi, i) => {
      if (refused.has(i)) say(`dup ${pwi}`);
      else say(`ack insert ${pwi} ${r.insertedIds[k++]}`);
    });
  }
  // Shared documents: each update adds its own key under extra; a lost update would lose a key.
  for (let n = 0; n < UPDATES; n++) {
    const pwi = `S-${Math.floor(random() * SHARED)}`;
    const key = `w${worker}.u${n}`;
    const r = await store.update('Well', { pwi }, { [`extra.${key}`]: n });
    if (r.success && r.count === 1) say(`ack update ${pwi} ${key}`);
    else say(`error update ${pwi} ${r.message}`);
  }
  // Shared documents, top-level fields (one statement each): each worker owns one field; its last write must stay.
  const field = ['rigId', 'operatorName', 'primaryProduct', 'entityType'][worker % 4]!;
  for (let n = 0; n < UPDATES; n++) {
    const pwi = `S-${Math.floor(random() * SHARED)}`;
    const r = await store.update('Well', { pwi }, { [field]: `u${n}` });
    if (r.success && r.count === 1) say(`ack set ${pwi} ${field} u${n}`);
    else say(`error set ${pwi} ${r.message}`);
  }
  // Upserts of the same new ids from every worker: each id ends as one document.
  for (const k of shuffled(Array.from({ length: REPLACED }, (_, i) => i))) {
    const id = `R-${k}`;
    const r = await store.replace('Well', [{ id, pwi: id, extra: { by: worker } }]);
    if (r.success) say(`ack replace ${id}`);
    else say(`error replace ${id} ${r.message}`);
  }
  say('done');
} finally {
  await store.close();
}
