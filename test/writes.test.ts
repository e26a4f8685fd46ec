/** The write rules (README "Writes"), on every backend (SQLite, PostgreSQL); file and misuse checks are SQLite's. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DataStore, DataStoreError, unwrap } from '../src/index.js';
import { backends, postgresBackend } from './helpers/backends.js';
import { all, ids, tempDir } from './helpers/store.js';

// The write rules also run with a pool the store makes itself (its single-statement writes), besides one of yours.
describe.each([...backends(), postgresBackend({ ownPool: true })])('$name', (backend) => {
  let store: DataStore;
  beforeEach(async () => {
    store = await backend.open({ userId: 'etl' });
  });
  afterEach(() => store.close());

  describe('insert', () => {
    it('keeps a given id, generates 24-hex time-ordered ids otherwise', async () => {
      const r = await store.insert('Well', [{ id: 'mine', pwi: 'A' }, { pwi: 'B' }, { pwi: 'C' }]);
      expect(r.success).toBe(true);
      expect(r.count).toBe(3);
      expect(r.insertedIds[0]).toBe('mine');
      const [, b, c] = r.insertedIds;
      expect(b).toMatch(/^[0-9a-f]{24}$/);
      expect(c).toMatch(/^[0-9a-f]{24}$/);
      expect(b! < c!).toBe(true);
      // The first 8 hex digits are the creation second.
      expect(Math.abs(parseInt(b!.slice(0, 8), 16) - Date.now() / 1000)).toBeLessThan(5);
    });

    it('sets base fields: createdAt/By kept if given, updatedAt/By, modifiedTimestamp and schemaVersion always', async () => {
      await store.insert('Well', [{ pwi: 'A' }, { pwi: 'B', createdAt: '1/2/2020', createdBy: 'import' }]);
      const [a, b] = await all(store, 'Well');
      expect(a!.createdBy).toBe('etl');
      expect(a!.updatedBy).toBe('etl');
      expect(a!.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      expect(a!.updatedAt).toBe(a!.createdAt);
      expect(a!.modifiedTimestamp).toBe(Date.parse(a!.updatedAt as string));
      expect(a!.schemaVersion).toBe('5.0.0');
      expect(b!.createdAt).toBe('2020-01-02T00:00:00.000Z');
      expect(b!.createdBy).toBe('import');
    });

    it('writes as the user of withUser', async () => {
      await store.withUser('alice').insert('Well', [{ pwi: 'A' }]);
      const [a] = await all(store, 'Well');
      expect(a!.createdBy).toBe('alice');
      expect(a!.updatedBy).toBe('alice');
    });

    it('normalises dates and de-duplicates HashSets keeping first occurrences in order', async () => {
      await store.insert('Well', [{ pwi: 'A', spudDate: '3/4/2021', completionDate: '2021-05-06', permitDate: '2021-01-01T10:00:00+02:00', groups: ['b', 'a', 'b', { x: 1 }, { x: 1 }] }]);
      const [a] = await all(store, 'Well');
      expect(a!.spudDate).toBe('2021-03-04T00:00:00.000Z');
      expect(a!.completionDate).toBe('2021-05-06T00:00:00.000Z');
      expect(a!.permitDate).toBe('2021-01-01T08:00:00.000Z');
      expect(a!.groups).toEqual(['b', 'a', { x: 1 }]);
    });

    it('stores a copy: id first, undefined members dropped, the given document untouched', async () => {
      const given = { pwi: 'A', name: undefined, spudDate: '3/4/2021', surfaceLoc: { type: 'Point' as const, coordinates: [-100, 30] }, id: 'w1' };
      const before = structuredClone(given);
      await store.insert('Well', [given]);
      const [a] = await all(store, 'Well');
      expect(Object.keys(a!)[0]).toBe('id');
      expect(a!).not.toHaveProperty('name');
      expect(a!.spudDate).toBe('2021-03-04T00:00:00.000Z');
      expect(given).toStrictEqual(before);
    });

    it('de-duplicates HashSet members by their JSON: 1 and "1", [1] and "[1]" are distinct', async () => {
      await store.insert('Well', [{ pwi: 'A', groups: [1, '1', 1, [1], '[1]', [1], null, null, true, 'true', -0, 0] }]);
      expect((await all(store, 'Well'))[0]!.groups).toEqual([1, '1', [1], '[1]', null, true, 'true', 0]);
    });

    it('accepts Date objects for DateTime fields', async () => {
      await store.insert('Well', [{ pwi: 'A', spudDate: new Date(Date.UTC(2022, 1, 3)) }]);
      expect((await all(store, 'Well'))[0]!.spudDate).toBe('2022-02-03T00:00:00.000Z');
    });

    it('fails the whole request on an invalid document, naming index and field, and writes nothing', async () => {
      const r = await store.dynamic.insert('Well', [
        { pwi: 'ok' },
        { pwi: 'bad', fracStages: 2.5 },
        { pwi: 'bad2', spudDate: 'yesterday', surfaceLoc: { type: 'Point', coordinates: [0, 91] } },
        { pwi: 'bad3', wat: 1 },
      ]);
      expect(r.success).toBe(false);
      expect(r.count).toBe(0);
      expect(r.insertedIds).toEqual([]);
      const found = r.errors.map((e) => [e.code, e.index, e.field]);
      expect(found).toEqual([
        ['VALIDATION', 1, 'fracStages'],
        ['VALIDATION', 2, 'spudDate'],
        ['VALIDATION', 2, 'surfaceLoc'],
        ['UNKNOWN_FIELD', 3, 'wat'],
      ]);
      expect(r.errors[1]!.message).toContain('yesterday');
      expect(r.errors[2]!.message).toContain('latitude 91');
      expect(await all(store, 'Well')).toEqual([]);
    });

    it.each([
      ['Int32 out of range', { fracStages: 2 ** 31 }],
      ['Int64 unsafe', { modifiedTimestamp: 2 ** 60 }],
      ['non-finite number', { lateralLength: Number.NaN }],
      ['boolean as number', { isVirtual: 1 }],
      ['string for number', { totalDepth: '100' }],
      ['impossible date', { spudDate: '2/30/2024' }],
      ['array for HashSet', { groups: 'a' }],
      ['Dictionary not an object', { extra: [1] }],
      ['bad duration', { name: 'x', uptime: 'soon' }],
    ])('rejects %s', async (_label, fields) => {
      const type = 'uptime' in fields ? 'DailyProduction' : 'Well';
      const doc = { ...fields };
      if (type === 'DailyProduction') delete (doc as Record<string, unknown>).name;
      const r = await store.dynamic.insert(type, [doc]);
      expect(r.success).toBe(false);
      expect(r.errors[0]!.code).toBe('VALIDATION');
      expect(r.errors[0]!.field).toBe(Object.keys(doc)[0]);
    });

    it('accepts null for every kind and durations as seconds or d.hh:mm:ss', async () => {
      const r = await store.insert('DailyProduction', [
        { pwi: 'A', prodDate: null, uptime: 86400, oilRate: null },
        { pwi: 'A', prodDate: '1/1/2024', uptime: '1.02:03:04', duration: '23:59:59' },
      ]);
      expect(r.success).toBe(true);
    });

    it('inserts the non-colliding documents and tells exactly which went in', async () => {
      await store.insert('Well', [{ pwi: 'A' }]);
      const r = await store.insert('Well', [{ pwi: 'B' }, { pwi: 'A' }, { pwi: 'C' }, { pwi: 'C' }]);
      expect(r.success).toBe(false);
      expect(r.count).toBe(2);
      expect(r.total).toBe(2);
      expect(r.insertedIds).toHaveLength(2);
      expect(r.errors.map((e) => [e.code, e.index, e.key])).toEqual([
        ['DUPLICATE_KEY', 1, { pwi: 'A' }],
        ['DUPLICATE_KEY', 3, { pwi: 'C' }],
      ]);
      expect(r.message).toBe('2 of 4 inserted; 2 duplicate keys');
      const stored = await all(store, 'Well');
      expect(stored.map((d) => d.pwi)).toEqual(['A', 'B', 'C']);
      expect(stored.slice(1).map((d) => d.id)).toEqual(r.insertedIds);
    });

    it('treats compound keys as a whole and lets documents missing a key field through', async () => {
      const r = await store.insert('DailyProduction', [
        { pwi: 'A', prodDate: '1/1/2024' },
        { pwi: 'A', prodDate: '1/2/2024' },
        { pwi: 'A', prodDate: '2024-01-01' },
        { pwi: 'A' },
        { pwi: 'A' },
        { prodDate: '1/1/2024' },
      ]);
      expect(r.errors.map((e) => e.index)).toEqual([2]);
      expect(r.count).toBe(5);
      const w = await store.insert('Well', [{ name: 'no pwi' }, { name: 'no pwi either' }, { pwi: null }, { pwi: null }]);
      expect(w.success).toBe(true);
    });

    it('reports a duplicate id as DUPLICATE_KEY on id', async () => {
      await store.insert('Comment', [{ id: 'c1' }]);
      const r = await store.insert('Comment', [{ id: 'c1' }]);
      expect(r.errors).toMatchObject([{ code: 'DUPLICATE_KEY', index: 0, key: { id: 'c1' } }]);
    });

    it('with atomic: true rolls the whole request back on any collision', async () => {
      await store.insert('Well', [{ pwi: 'A' }]);
      const r = await store.insert('Well', [{ pwi: 'B' }, { pwi: 'A' }], { atomic: true });
      expect(r.success).toBe(false);
      expect(r.count).toBe(0);
      expect(r.insertedIds).toEqual([]);
      expect(r.errors).toMatchObject([{ code: 'DUPLICATE_KEY', index: 1 }]);
      expect((await all(store, 'Well')).map((d) => d.pwi)).toEqual(['A']);
    });

    it('honours uniqueKeys and extra unique indexes from options', async () => {
      const s = await backend.open({ uniqueKeys: { Well: [] }, indexes: { Well: [{ fields: ['wellId'], unique: true }] } });
      // One well's documents: on Citus a unique key without pwi holds within a well (README "Citus").
      const r = await s.insert('Well', [{ pwi: 'A', wellId: '1' }, { pwi: 'A', wellId: '2' }, { pwi: 'A', wellId: '1' }]);
      expect(r.errors).toMatchObject([{ code: 'DUPLICATE_KEY', index: 2, key: { wellId: '1' } }]);
      await s.close();
    });

    it('answers an envelope for a non-array, an unknown type, a bad type name', async () => {
      expect((await store.insert('Well', { pwi: 'A' } as never)).errors[0]!.code).toBe('INVALID_REQUEST');
      const u = await store.dynamic.insert('Wel', [{}]);
      expect(u.errors[0]!.code).toBe('UNKNOWN_TYPE');
      expect(u.message).toContain('"Well"');
      expect((await store.insert(42 as never, [{}])).errors[0]!.code).toBe('INVALID_REQUEST');
    });

    it('resolves type names case-insensitively and Folder as Petron', async () => {
      await store.dynamic.insert('well', [{ pwi: 'A' }]);
      await store.dynamic.insert('Folder', [{ name: 'f' }]);
      expect(await ids(store, 'WELL')).toHaveLength(1);
      expect(unwrap(await store.query('Petron', {})).map((d) => d.name)).toEqual(['f']);
    });

    it('keeps __proto__ keys as data and pollutes no prototype', async () => {
      const s = await backend.open({ strict: false });
      const doc = JSON.parse('{"pwi":"A","__proto__":{"polluted":true},"extra":{"__proto__":{"polluted":true}}}');
      expect((await s.insert('Well', [doc])).success).toBe(true);
      const [back] = await all(s, 'Well');
      expect(Object.prototype.hasOwnProperty.call(back, '__proto__')).toBe(true);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      await s.close();
    });
  });

  describe('replace', () => {
    it('replaces documents whose id exists, keeping createdAt/By and insertion order, inserting the rest', async () => {
      const first = await store.withUser('alice').insert('Well', [{ pwi: 'A', name: 'old' }, { pwi: 'B' }]);
      const [idA] = first.insertedIds;
      const [before] = await all(store, 'Well');
      await new Promise((r) => setTimeout(r, 5));
      const r = await store.withUser('bob').replace('Well', [{ id: idA, pwi: 'A', statusCurrent: 'Producing' }, { pwi: 'C' }, { id: 'new-id', pwi: 'D' }]);
      expect(r.success).toBe(true);
      expect(r.count).toBe(3);
      expect(r.insertedIds).toHaveLength(2);
      expect(r.insertedIds[1]).toBe('new-id');
      const docs = await all(store, 'Well');
      expect(docs.map((d) => d.pwi)).toEqual(['A', 'B', 'C', 'D']);
      const a = docs[0]!;
      expect(a.name).toBeUndefined();
      expect(a.statusCurrent).toBe('Producing');
      expect(a.createdAt).toBe(before!.createdAt);
      expect(a.createdBy).toBe('alice');
      expect(a.updatedBy).toBe('bob');
      expect(a.updatedAt! > before!.updatedAt!).toBe(true);
    });

    it('is all or nothing: a collision rolls back every document of the request', async () => {
      const { insertedIds } = await store.insert('Well', [{ pwi: 'A' }, { pwi: 'B' }]);
      const r = await store.replace('Well', [{ id: insertedIds[0], pwi: 'A', name: 'renamed' }, { pwi: 'B' }]);
      expect(r.success).toBe(false);
      expect(r.errors).toMatchObject([{ code: 'DUPLICATE_KEY', index: 1, key: { pwi: 'B' } }]);
      expect((await all(store, 'Well')).map((d) => [d.pwi, d.name])).toEqual([
        ['A', undefined],
        ['B', undefined],
      ]);
    });

    it('names the document that collides when several are written in one statement: the 3rd, with nothing written', async () => {
      const { insertedIds } = await store.insert('Well', [{ pwi: 'A' }, { pwi: 'B' }]);
      const duplicate = (pwi: string) => [{ code: 'DUPLICATE_KEY', index: 2, key: { pwi }, message: `document 2: a Well with pwi "${pwi}" already exists` }];
      // New documents, the 3rd on a stored key, then on the key of the 1st of the same request.
      expect((await store.replace('Well', [{ pwi: 'C' }, { pwi: 'D' }, { pwi: 'A' }, { pwi: 'E' }])).errors).toEqual(duplicate('A'));
      expect((await store.replace('Well', [{ pwi: 'C' }, { pwi: 'D' }, { pwi: 'C' }])).errors).toEqual(duplicate('C'));
      // Two replacements that keep their keys, then a new document on a stored key.
      const r = await store.replace('Well', [{ id: insertedIds[0], pwi: 'A', name: 'a' }, { id: insertedIds[1], pwi: 'B', name: 'b' }, { pwi: 'B' }]);
      expect(r).toMatchObject({ success: false, errors: duplicate('B') });
      expect((await all(store, 'Well')).map((d) => [d.pwi, d.name])).toEqual([
        ['A', undefined],
        ['B', undefined],
      ]);
    });

    it('refuses a generated id that is taken (a generator repeating itself) as DUPLICATE_KEY, leaving the stored document', async () => {
      const repeating = await backend.open({ ids: () => 'plugin-1' });
      try {
        // A type distributed by id on Citus, where ids are unique across the cluster (README "Citus").
        await repeating.insert('Plugin', [{ name: 'kept', description: 'stored' }]);
        const r = await repeating.replace('Plugin', [{ name: 'new' }]);
        expect(r).toMatchObject({ success: false, errors: [{ code: 'DUPLICATE_KEY', index: 0 }] });
        expect((await all(repeating, 'Plugin')).map((d) => [d.id, d.name, d.description])).toEqual([['plugin-1', 'kept', 'stored']]);
      } finally {
        await repeating.close();
      }
    });

    it('validates before writing', async () => {
      const r = await store.dynamic.replace('Well', [{ pwi: 'A' }, { pwi: 5 }]);
      expect(r.errors).toMatchObject([{ code: 'VALIDATION', index: 1, field: 'pwi' }]);
      expect(await all(store, 'Well')).toEqual([]);
    });
  });

  describe('update', () => {
    beforeEach(async () => {
      await store.insert('Well', [
        { pwi: 'A', basinName: 'Permian', extra: { src: { a: 1 } } },
        { pwi: 'B', basinName: 'Permian', extra: { src: 'flat' } },
        { pwi: 'C', basinName: 'Bakken' },
      ]);
    });

    it('sets fields on every matched document; count = matched', async () => {
      const r = await store.withUser('bob').update('Well', { basinName: 'Permian' }, { statusCurrent: 'Producing', spudDate: '1/2/2020' });
      expect(r.success).toBe(true);
      expect(r.count).toBe(2);
      const docs = await all(store, 'Well');
      expect(docs.map((d) => d.statusCurrent ?? null)).toEqual(['Producing', 'Producing', null]);
      expect(docs[0]!.spudDate).toBe('2020-01-02T00:00:00.000Z');
      expect(docs[0]!.updatedBy).toBe('bob');
      expect(docs[2]!.updatedBy).toBe('etl');
    });

    it('sets dotted paths inside objects, creating missing parents', async () => {
      const r = await store.update('Well', { pwi: { in: ['A', 'C'] } }, { 'extra.src.b': 2, 'extra.new.deep': true });
      expect(r.count).toBe(2);
      const docs = await all(store, 'Well');
      expect(docs[0]!.extra).toEqual({ src: { a: 1, b: 2 }, new: { deep: true } });
      expect(docs[2]!.extra).toEqual({ src: { b: 2 }, new: { deep: true } });
    });

    it('refuses a dotted path through a non-object value and changes nothing', async () => {
      const r = await store.update('Well', { basinName: 'Permian' }, { 'extra.src.b': 2 });
      expect(r.success).toBe(false);
      expect(r.errors[0]!.code).toBe('VALIDATION');
      expect((await all(store, 'Well'))[0]!.extra).toEqual({ src: { a: 1 } });
    });

    it('validates body values, refuses id changes, empty bodies, unknown fields and parts of GeoPoints', async () => {
      const cases: [unknown, string, string?][] = [
        [{ fracStages: 'x' }, 'VALIDATION', 'fracStages'],
        [{ id: 'other' }, 'VALIDATION', 'id'],
        [{}, 'VALIDATION', 'body'],
        [[{ a: 1 }], 'VALIDATION', 'body'],
        [{ nope: 1 }, 'UNKNOWN_FIELD', 'nope'],
        [{ 'surfaceLoc.coordinates': [1, 2] }, 'VALIDATION', 'surfaceLoc.coordinates'],
        [{ 'groups.0': 'x' }, 'VALIDATION', 'groups.0'],
      ];
      for (const [body, code, field] of cases) {
        const r = await store.dynamic.update('Well', { pwi: 'A' }, body);
        expect(r.success, JSON.stringify(body)).toBe(false);
        expect(r.errors[0]).toMatchObject({ code, field });
      }
      expect((await all(store, 'Well'))[0]!.updatedAt).toBe((await all(store, 'Well'))[0]!.createdAt);
    });

    // It moves documents to another pwi, which Citus refuses as VALIDATION (README "Citus"; test/citus checks that).
    if (!backend.citus) {
      it('rolls back an update that would collide on a unique key', async () => {
        const r = await store.update('Well', { basinName: 'Permian' }, { pwi: 'Z' });
        expect(r.success).toBe(false);
        expect(r.errors[0]!.code).toBe('DUPLICATE_KEY');
        expect((await all(store, 'Well')).map((d) => d.pwi)).toEqual(['A', 'B', 'C']);
      });
    }

    it('de-duplicates HashSet values it sets', async () => {
      await store.update('Well', { pwi: 'A' }, { groups: ['x', 'x', 'y'] });
      expect((await all(store, 'Well'))[0]!.groups).toEqual(['x', 'y']);
    });
  });

  describe('delete', () => {
    beforeEach(async () => {
      await store.insert('Well', [{ pwi: 'A', basinName: 'Permian' }, { pwi: 'B', basinName: 'Permian' }, { pwi: 'C' }]);
    });

    it('removes the matched documents; count = deleted', async () => {
      const r = await store.delete('Well', { basinName: 'Permian' });
      expect(r.success).toBe(true);
      expect(r.count).toBe(2);
      expect((await all(store, 'Well')).map((d) => d.pwi)).toEqual(['C']);
    });

    it.each([[undefined], [null], [{}], [{ pwi: { bounds: [0, 0, 1, 1] } }]])('refuses an empty query (%j): success, count 0, nothing removed', async (q) => {
      const r = await store.dynamic.delete('Well', q);
      expect(r.success).toBe(true);
      expect(r.count).toBe(0);
      expect(r.message).toMatch(/illegal operation/i);
      expect(r.errors[0]!.code).toBe('ILLEGAL_OPERATION');
      expect(await all(store, 'Well')).toHaveLength(3);
    });
  });

  describe('envelopes', () => {
    it('answers every envelope key on success and failure', async () => {
      const keys = ['data', 'cursor', 'hasCursor', 'empty', 'count', 'total', 'activityId', 'success', 'message', 'errors', 'issues', 'hasErrors', 'insertedIds', 'idsNotFound', 'updatedIds', 'deletedIds', 'referencesRemoved', 'referencesUpdated', 'referencesInserted'];
      for (const env of [await store.dynamic.types(), await store.dynamic.query('Nope', {}), await store.insert('Well', [{ pwi: 'A' }]), await store.delete('Well', {})]) {
        expect(Object.keys(env).sort()).toEqual([...keys].sort());
        expect(env.hasErrors).toBe(env.errors.length > 0);
        expect(env.cursor).toBeNull();
        expect(env.hasCursor).toBe(false);
      }
    });

    it('unwrap returns data or throws a DataStoreError carrying the envelope', async () => {
      expect(unwrap(await store.types())).toContain('Well');
      const bad = await store.dynamic.query('Nope', {});
      try {
        unwrap(bad);
        expect.unreachable();
      } catch (e) {
        expect(e).toBeInstanceOf(DataStoreError);
        expect((e as DataStoreError).code).toBe('UNKNOWN_TYPE');
        expect((e as DataStoreError).envelope).toBe(bad);
      }
    });
  });
});

describe('file stores', () => {
  it('survive close and reopen, in WAL mode', async () => {
    const t = tempDir();
    try {
      const a = DataStore.open(t.file());
      expect(a.database.pragma('journal_mode', { simple: true })).toBe('wal');
      await a.insert('Well', [{ pwi: 'A', surfaceLoc: { type: 'Point', coordinates: [1, 2] } }]);
      a.close();
      const b = DataStore.open(t.file());
      expect((await all(b, 'Well')).map((d) => d.pwi)).toEqual(['A']);
      expect(await ids(b, 'Well', { surfaceLoc: { bounds: [0, 0, 2, 3] } })).toHaveLength(1);
      const dup = await b.insert('Well', [{ pwi: 'A' }]);
      expect(dup.errors[0]!.code).toBe('DUPLICATE_KEY');
      b.close();
    } finally {
      t.cleanup();
    }
  });
});

describe('replace beside another connection', () => {
  it('checks a unique key another connection added after this one last replaced, in the order of the documents', async () => {
    const t = tempDir();
    try {
      const first = DataStore.open(t.file());
      const { insertedIds: [b, a] } = await first.insert('Well', [{ pwi: 'B', name: 'y' }, { pwi: 'A', name: 'x' }]);
      expect((await first.replace('Well', [{ id: a!, pwi: 'A', name: 'x' }])).success).toBe(true);
      const second = DataStore.open(t.file(), { uniqueKeys: { Well: [['pwi'], ['name']] } });
      // One by one, A taking B's name fails before B lets it go.
      const r = await first.replace('Well', [{ id: a!, pwi: 'A', name: 'y' }, { id: b!, pwi: 'B', name: 'z' }]);
      expect(r).toMatchObject({ success: false, errors: [{ code: 'DUPLICATE_KEY', index: 0, key: { name: 'y' } }] });
      expect((await all(second, 'Well')).map((d) => [d.pwi, d.name])).toEqual([
        ['B', 'y'],
        ['A', 'x'],
      ]);
      first.close();
      second.close();
    } finally {
      t.cleanup();
    }
  });
});

describe('opening an existing file', () => {
  it('reads the schema fingerprint and takes no write lock, so it opens while another connection writes', async () => {
    const t = tempDir();
    try {
      const a = DataStore.open(t.file());
      await a.insert('Well', [{ pwi: 'A' }]);
      a.database.prepare('BEGIN IMMEDIATE').run();
      const b = DataStore.open(t.file(), { busyTimeoutMs: 0 });
      expect(await ids(b, 'Well', { pwi: 'A' })).toHaveLength(1);
      a.database.prepare('ROLLBACK').run();
      b.close();
      a.close();
    } finally {
      t.cleanup();
    }
  });

  it('adds the indexes a later open asks for', async () => {
    const t = tempDir();
    try {
      DataStore.open(t.file()).close();
      const b = DataStore.open(t.file(), { indexes: { Well: [{ fields: ['basinName'] }] } });
      const names = b.database.prepare(`SELECT name FROM sqlite_master WHERE type = 'index'`).pluck().all();
      expect(names).toContain('ix._well.basin_name');
      b.close();
    } finally {
      t.cleanup();
    }
  });
});

describe('misuse', () => {
  it('throws TypeError on a closed store and for a non-string path', async () => {
    const s = DataStore.open();
    s.close();
    expect(() => s.query('Well', {})).toThrow(TypeError);
    expect(() => DataStore.open(42 as never)).toThrow(TypeError);
    expect(() => DataStore.open(':memory:', { strcit: true } as never)).toThrow(/did you mean "strict"/);
  });
});
