/**
 * A query answered as JSON text (DynamicStore#queryText: the pool's workers, the one-thread server) is byte for byte
 * `JSON.stringify(await store.query(…))`, whether the stored text of each document is sent as it is (whole
 * documents) or parsed and serialised again (projections, distances): over the case table and random documents.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DataStore, type DynamicStore } from '../src/index.js';
import { sqlite, sqliteCached } from './helpers/backends.js';
import { CASES } from './helpers/cases.js';

/** The answer's text as its slices make it, sliced small so documents fall on every side of a cut. */
async function textOf(store: DynamicStore, type: string, query: unknown, options: unknown): Promise<string> {
  const { failure, slices } = await store.queryText(type, query, options, { rows: 2, chars: 64 });
  let text = '';
  for (let s = slices.next(); ; s = slices.next()) {
    text += s.text;
    if (s.end) break;
  }
  if (failure) expect(text).toBe(JSON.stringify(failure));
  return text;
}

/** The case's options, and those of a first page, a later page by cursor, a projection and a sort. */
function variants(options: Record<string, unknown> | undefined): Record<string, unknown>[] {
  const own = options ?? {};
  return [own, { ...own, limit: 2 }, { ...own, limit: 1, skip: 1 }, { ...own, skip: 1 }, { ...own, fields: ['id', 'pwi', 'extra'] }, { ...own, sortBy: 'pwi', sortOrder: -1, limit: 3 }];
}

describe.each([sqlite, sqliteCached])('query text on $name', (backend) => {
  it('is JSON.stringify of the envelope for every case of the table and its pages', async () => {
    let compared = 0;
    for (const c of CASES) {
      const store = await backend.open({ strict: c.strict ?? true });
      try {
        expect((await store.dynamic.insert('Well', c.docs as Record<string, unknown>[])).errors).toEqual([]);
        for (const options of variants(c.options as Record<string, unknown> | undefined)) {
          const env = await store.dynamic.query('Well', c.query, options);
          expect(await textOf(store.dynamic, 'Well', c.query, options), `${c.name} ${JSON.stringify(options)}`).toBe(JSON.stringify(env));
          compared++;
          // The next page by cursor: its text too.
          if (env.cursor) {
            const next = { ...options, cursor: env.cursor };
            expect(await textOf(store.dynamic, 'Well', c.query, next)).toBe(JSON.stringify(await store.dynamic.query('Well', c.query, next)));
          }
        }
      } finally {
        await store.close();
      }
    }
    expect(compared).toBe(CASES.length * 6);
  });
});

/** Untyped values whose text JSON.stringify and SQLite might render otherwise. */
const awkward = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }),
  fc.constantFrom(0.1 + 0.2, 1e21, 1e-7, 5e-324, -0, 2 ** 53 + 2, 1.5, '\u2028', '\ud800', '\u0000"\\', 'é日'),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.string({ unit: 'binary' }),
);

describe('query text of random documents (SQLite)', () => {
  it('is JSON.stringify of the envelope for random documents, pages, sorts and projections', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ odd: awkward, bag: fc.dictionary(fc.string({ maxLength: 4 }), awkward, { maxKeys: 3 }) }), { maxLength: 8 }),
        fc.record({ limit: fc.integer({ min: 0, max: 4 }), skip: fc.integer({ min: 0, max: 3 }), sortBy: fc.constantFrom(undefined, 'pwi', 'odd'), fields: fc.constantFrom(undefined, ['id', 'odd'], ['bag']) }, { requiredKeys: [] }),
        async (docs, options) => {
          const store = DataStore.open(':memory:', { strict: false, clock: () => 1_700_000_000_000, ids: 1 });
          try {
            const inserted = await store.dynamic.insert('Well', docs.map((d, i) => ({ pwi: `W-${i}`, ...d })));
            expect(inserted.errors).toEqual([]);
            expect(await textOf(store.dynamic, 'Well', {}, options)).toBe(JSON.stringify(await store.dynamic.query('Well', {}, options)));
          } finally {
            await store.close();
          }
        },
      ),
      { numRuns: 150 },
    );
  });
});

describe('query text of k-nearest pages with distances (SQLite)', () => {
  it('is JSON.stringify of the envelope, the distance SQLite computes rendered as JSON.stringify renders it', async () => {
    const point = fc.tuple(fc.double({ min: -102, max: -101, noNaN: true }), fc.double({ min: 31, max: 32, noNaN: true }));
    await fc.assert(
      fc.asyncProperty(
        fc.array(point, { minLength: 1, maxLength: 8 }),
        point,
        fc.record({ limit: fc.integer({ min: 0, max: 4 }), sortBy: fc.constantFrom(undefined, 'surfaceLoc'), distance: fc.constantFrom(undefined, 'metres') }, { requiredKeys: [] }),
        async (points, from, options) => {
          const store = DataStore.open(':memory:', { clock: () => 1_700_000_000_000, ids: 1 });
          try {
            const docs = points.map((coordinates, i) => ({ pwi: `W-${i}`, surfaceLoc: { type: 'Point', coordinates } }));
            expect((await store.dynamic.insert('Well', docs)).errors).toEqual([]);
            const query = { surfaceLoc: { near: { point: from, maxDistance: 200_000 } } };
            expect(await textOf(store.dynamic, 'Well', query, options)).toBe(JSON.stringify(await store.dynamic.query('Well', query, options)));
          } finally {
            await store.close();
          }
        },
      ),
      { numRuns: 100 },
    );
  });
});

describe('query text inside a transaction held on the connection (SQLite)', () => {
  it('reads in that transaction, and leaves it open, for a streamed page after a skip', async () => {
    const store = DataStore.open(':memory:');
    try {
      expect((await store.dynamic.insert('Well', [{ pwi: 'A' }, { pwi: 'B' }, { pwi: 'C' }])).errors).toEqual([]);
      store.database.exec('BEGIN');
      const text = await textOf(store.dynamic, 'Well', {}, { skip: 1 });
      expect(text).toBe(JSON.stringify(await store.dynamic.query('Well', {}, { skip: 1 })));
      expect(JSON.parse(text).data.map((d: { pwi: string }) => d.pwi)).toEqual(['B', 'C']);
      expect(store.database.inTransaction).toBe(true);
      store.database.exec('COMMIT');
    } finally {
      await store.close();
    }
  });
});

describe('query text of a slice size that is not one (misuse)', () => {
  it('throws a TypeError before reading, for a number, a zero and a missing bound', () => {
    const store = DataStore.open(':memory:');
    try {
      for (const size of [1 << 20, { rows: 0, chars: 64 }, { rows: 2 }, { rows: 2, chars: Infinity }, null]) {
        expect(() => store.dynamic.queryText('Well', {}, undefined, size as never)).toThrow(new TypeError('queryText: size must be { rows, chars }, positive integers'));
      }
    } finally {
      void store.close();
    }
  });
});
