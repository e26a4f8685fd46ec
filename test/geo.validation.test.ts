/**
 * Geo operands and GeoPoint values are checked: invalid geometry is an INVALID_QUERY error naming the operand's
 * path; bounds/polygon on a field that is not a GeoPoint is ignored with a warning; invalid points are not written.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DataStore, type SqliteDataStore } from '../src/index.js';
import { point, SQUARE } from './helpers/geo.js';


let store: SqliteDataStore;
beforeEach(async () => {
  store = DataStore.open();
  const r = await store.insert('Well', [
    { pwi: 'A', basinName: 'Permian', surfaceLoc: point(-101.5, 31.5), extra: { loc: { type: 'Point', coordinates: [-101.5, 31.5] } } },
    { pwi: 'B', basinName: 'Permian', surfaceLoc: point(-97, 33) },
    { pwi: 'C', basinName: 'Bakken' },
  ]);
  expect(r.success, r.message).toBe(true);
});
afterEach(() => store.close());

async function expectInvalid(query: Record<string, unknown>, label: string, reason?: RegExp): Promise<void> {
  const r = await store.dynamic.query('Well', query);
  const ctx = JSON.stringify(query);
  expect(r.success, ctx).toBe(false);
  expect(r.data, ctx).toEqual([]);
  expect(r.errors.length, ctx).toBeGreaterThan(0);
  expect(r.errors[0]!.code, ctx).toBe('INVALID_QUERY');
  expect(r.errors[0]!.message, ctx).toContain(label);
  expect(r.message, ctx).toContain(label);
  if (reason) expect(r.errors[0]!.message, ctx).toMatch(reason);
}

describe('invalid bounds operands', () => {
  const label = 'query.surfaceLoc.bounds';
  it.each([
    ['three numbers', [1, 2, 3], /\[x1, y1, x2, y2\]/],
    ['five numbers', [1, 2, 3, 4, 5], /\[x1, y1, x2, y2\]/],
    ['an empty array', [], /\[x1, y1, x2, y2\]/],
    ['two corner pairs', [[1, 2], [3, 4]], /\[x1, y1, x2, y2\]/],
    ['a string', '1,2,3,4', /\[x1, y1, x2, y2\]/],
    ['an object', { x1: 1, y1: 2, x2: 3, y2: 4 }, /\[x1, y1, x2, y2\]/],
    ['null', null, /\[x1, y1, x2, y2\]/],
    ['numeric strings', ['-102', '31', '-101', '32'], /finite numbers/],
    ['"NaN" strings', ['NaN', 31, -101, 32], /finite numbers/],
    ['NaN', [Number.NaN, 31, -101, 32], /finite numbers/],
    ['Infinity', [-102, 31, Number.POSITIVE_INFINITY, 32], /finite numbers/],
    ['a boolean', [-102, true, -101, 32], /finite numbers/],
    ['null inside', [-102, null, -101, 32], /finite numbers/],
    ['longitude -181', [-181, 31, -101, 32], /longitude -181/],
    ['longitude 180.5 on the second corner', [-102, 31, 180.5, 32], /longitude 180.5/],
    ['latitude -91', [-102, -91, -101, 32], /latitude -91/],
    ['latitude 90.0001 on the second corner', [-102, 31, -101, 90.0001], /latitude 90.0001/],
  ])('%s', async (_name, operand, reason) => {
    await expectInvalid({ surfaceLoc: { bounds: operand } }, label, reason);
  });

  it('names the field in the error', async () => {
    const r = await store.dynamic.query('Well', { midPointLoc: { bounds: [1, 2, 3] } });
    expect(r.errors[0]!.field).toBe('midPointLoc.bounds');
    expect(r.errors[0]!.message).toContain('query.midPointLoc.bounds');
  });

  it('an operator written in another case is checked the same way', async () => {
    await expectInvalid({ surfaceLoc: { Bounds: [1, 2, 3] } }, 'query.surfaceLoc.Bounds');
  });

  it('the extreme valid values are accepted', async () => {
    const r = await store.query('Well', { surfaceLoc: { bounds: [-180, -90, 180, 90] } });
    expect(r.success, r.message).toBe(true);
    expect(r.data.map((d) => d.pwi)).toEqual(['A', 'B']);
  });
});

describe('invalid polygon operands', () => {
  const label = 'query.surfaceLoc.polygon';
  it.each([
    ['an unclosed ring', [SQUARE.slice(0, 4)], /not closed/],
    ['an unclosed hole', [SQUARE, [[-101.8, 31.2], [-101.2, 31.2], [-101.5, 31.8]].concat([[-101.8, 31.3]])], /ring 1 is not closed/],
    ['a ring of 3 positions', [[[-102, 31], [-101, 31], [-102, 31]]], /at least 4/],
    ['a ring of 1 position', [[[-102, 31]]], /at least 4/],
    ['an empty ring', [[]], /at least 4/],
    ['a hole of 3 positions', [SQUARE, [[-101.8, 31.2], [-101.2, 31.2], [-101.8, 31.2]]], /ring 1 has 3 positions/],
    ['an empty polygon', [], /non-empty array of rings/],
    ['a string', 'POLYGON((-102 31, -101 31, -101 32, -102 31))', /non-empty array of rings/],
    ['a number', 42, /non-empty array of rings/],
    ['null', null, /non-empty array of rings/],
    ['a plain object', { rings: [SQUARE] }, /non-empty array of rings/],
    ['a single ring (not wrapped in the rings array)', SQUARE, /ring 0/],
    ['a ring that is not an array', [5], /ring 0 must be an array/],
    ['non-numeric coordinates', [[['-102', '31'], [-101, 31], [-101, 32], ['-102', '31']]], /finite numbers/],
    ['"NaN" strings', [[['NaN', 31], [-101, 31], [-101, 32], ['NaN', 31]]], /finite numbers/],
    ['NaN', [[[Number.NaN, 31], [-101, 31], [-101, 32], [Number.NaN, 31]]], /finite numbers/],
    ['a position of one number', [[[-102], [-101, 31], [-101, 32], [-102]]], /\[longitude, latitude\]/],
    ['longitude 181', [[[-102, 31], [181, 31], [-101, 32], [-102, 31]]], /longitude 181/],
    ['latitude -90.5', [[[-102, 31], [-101, -90.5], [-101, 32], [-102, 31]]], /latitude -90.5/],
    ['GeoJSON with invalid coordinates', { type: 'Polygon', coordinates: [SQUARE.slice(0, 4)] }, /not closed/],
    ['GeoJSON of another type', { type: 'MultiPolygon', coordinates: [[SQUARE]] }, /non-empty array of rings/],
  ])('%s', async (_name, operand, reason) => {
    await expectInvalid({ surfaceLoc: { polygon: operand } }, label, reason);
  });

  it('names the field in the error, and reports errors of several fields together', async () => {
    const r = await store.dynamic.query('Well', { surfaceLoc: { polygon: [] }, bottomHoleLoc: { bounds: [0, 0, 0] } });
    expect(r.success).toBe(false);
    expect(r.errors.map((e) => e.code)).toEqual(['INVALID_QUERY', 'INVALID_QUERY']);
    expect(r.errors.map((e) => e.field)).toEqual(['surfaceLoc.polygon', 'bottomHoleLoc.bounds']);
  });

  it('an invalid geo condition in an update or delete query fails the request and changes nothing', async () => {
    const u = await store.update('Well', { surfaceLoc: { polygon: [SQUARE.slice(0, 3)] } }, { basinName: 'X' });
    expect(u.success).toBe(false);
    expect(u.errors[0]!.code).toBe('INVALID_QUERY');
    expect(u.errors[0]!.message).toContain('query.surfaceLoc.polygon');
    const d = await store.dynamic.delete('Well', { surfaceLoc: { bounds: [0, 0, 0, 'x'] } });
    expect(d.success).toBe(false);
    expect(d.errors[0]!.code).toBe('INVALID_QUERY');
    const all = await store.query('Well', {});
    expect(all.total).toBe(3);
    expect(all.data.map((x) => x.basinName)).toEqual(['Permian', 'Permian', 'Bakken']);
  });
});

describe('valid polygon forms', () => {
  it('a GeoJSON Polygon operand is accepted and answers like the rings array', async () => {
    const rings = await store.query('Well', { surfaceLoc: { polygon: [SQUARE] } });
    const geojson = await store.dynamic.query('Well', { surfaceLoc: { polygon: { type: 'Polygon', coordinates: [SQUARE] } } });
    expect(rings.success, rings.message).toBe(true);
    expect(geojson.success, geojson.message).toBe(true);
    expect(geojson.data.map((d) => d.pwi)).toEqual(['A']);
    expect(geojson.data.map((d) => d.pwi)).toEqual(rings.data.map((d) => d.pwi));
  });

  it('a GeoJSON Polygon with a hole excludes the points in the hole', async () => {
    const hole = [
      [-101.6, 31.4],
      [-101.4, 31.4],
      [-101.4, 31.6],
      [-101.6, 31.6],
      [-101.6, 31.4],
    ];
    const r = await store.dynamic.query('Well', { surfaceLoc: { polygon: { type: 'Polygon', coordinates: [SQUARE, hole] } } });
    expect(r.success, r.message).toBe(true);
    expect(r.data).toEqual([]);
  });

  it('positions with an altitude are accepted', async () => {
    const r = await store.query('Well', { surfaceLoc: { polygon: [SQUARE.map(([x, y]) => [x!, y!, 100])] } });
    expect(r.success, r.message).toBe(true);
    expect(r.data.map((d) => d.pwi)).toEqual(['A']);
  });
});

describe('bounds/polygon on a field that is not a GeoPoint: ignored with a warning', () => {
  it.each([
    ['a String field', 'pwi', 'bounds', [-102, 31, -101, 32]],
    ['an Int32 field', 'fracStages', 'bounds', [-102, 31, -101, 32]],
    ['a path into a Dictionary', 'extra.loc', 'bounds', [-102, 31, -101, 32]],
    ['a path into a Dictionary (polygon)', 'extra.loc', 'polygon', [SQUARE]],
    ['a GeoMultiPolygon field', 'aoi', 'polygon', [SQUARE]],
    ['a path inside a GeoPoint', 'surfaceLoc.coordinates', 'bounds', [-102, 31, -101, 32]],
    ['a String field (GeoJSON polygon)', 'pwi', 'polygon', { type: 'Polygon', coordinates: [SQUARE] }],
  ])('%s (%s.%s)', async (_name, field, op, operand) => {
    const r = await store.query('Well', { [field]: { [op]: operand } });
    expect(r.success, r.message).toBe(true);
    expect(r.errors).toEqual([]);
    expect(r.total).toBe(3);
    expect(r.data.map((d) => d.pwi)).toEqual(['A', 'B', 'C']);
    expect(r.issues).toHaveLength(1);
    expect(r.issues[0]).toContain(`query.${field}.${op}`);
    expect(r.issues[0]).toMatch(/not a GeoPoint/);
    expect(r.issues[0]).toMatch(/ignored/);
  });

  it('the other conditions, sorting and paging still apply', async () => {
    const r = await store.dynamic.query(
      'Well',
      { pwi: { bounds: [-102, 31, -101, 32] }, basinName: 'Permian' },
      { sortBy: 'pwi', sortOrder: -1, limit: 1 },
    );
    expect(r.success, r.message).toBe(true);
    expect(r.data.map((d) => d.pwi)).toEqual(['B']);
    expect(r.total).toBe(2);
    expect(r.issues).toHaveLength(1);
  });

  it('an ignored condition next to a real geo condition: only the real one filters', async () => {
    const r = await store.dynamic.query('Well', { pwi: { polygon: [SQUARE] }, surfaceLoc: { bounds: [-102, 31, -101, 32] } });
    expect(r.success, r.message).toBe(true);
    expect(r.data.map((d) => d.pwi)).toEqual(['A']);
    expect(r.issues).toHaveLength(1);
    expect(r.issues[0]).toContain('query.pwi.polygon');
  });

  it('an unknown field in non-strict mode is ignored with a warning too', async () => {
    const loose = DataStore.open(':memory:', { strict: false });
    try {
      await loose.dynamic.insert('Well', [{ pwi: 'A', myLoc: { type: 'Point', coordinates: [0, 0] } }, { pwi: 'B' }]);
      const r = await loose.dynamic.query('Well', { myLoc: { bounds: [10, 10, 11, 11] } });
      expect(r.success, r.message).toBe(true);
      expect(r.data.map((d) => d.pwi)).toEqual(['A', 'B']);
      expect(r.issues).toHaveLength(1);
      expect(r.issues[0]).toContain('query.myLoc.bounds');
    } finally {
      loose.close();
    }
  });

  it('a real GeoPoint field gives no warning', async () => {
    const r = await store.query('Well', { surfaceLoc: { bounds: [-102, 31, -101, 32] } });
    expect(r.issues).toEqual([]);
    expect(r.data.map((d) => d.pwi)).toEqual(['A']);
  });
});

describe('invalid GeoPoint values on write', () => {
  const rtreeRows = () => store.database.prepare('SELECT count(*) FROM "rtree._well.surface_loc"').pluck().get();

  it.each([
    ['latitude 91', { type: 'Point', coordinates: [-101, 91] }, /latitude 91/],
    ['latitude -90.01', { type: 'Point', coordinates: [-101, -90.01] }, /latitude -90.01/],
    ['longitude 180.5', { type: 'Point', coordinates: [180.5, 31] }, /longitude 180.5/],
    ['missing coordinates', { type: 'Point' }, /\[longitude, latitude\]/],
    ['empty coordinates', { type: 'Point', coordinates: [] }, /\[longitude, latitude\]/],
    ['one coordinate', { type: 'Point', coordinates: [-101] }, /\[longitude, latitude\]/],
    ['four coordinates', { type: 'Point', coordinates: [-101, 31, 0, 0] }, /\[longitude, latitude\]/],
    ['string coordinates', { type: 'Point', coordinates: ['-101', '31'] }, /finite numbers/],
    ['NaN', { type: 'Point', coordinates: [Number.NaN, 31] }, /finite numbers/],
    ['type LineString', { type: 'LineString', coordinates: [[-101, 31], [-100, 32]] }, /GeoJSON Point/],
    ['type missing', { coordinates: [-101, 31] }, /GeoJSON Point/],
    ['type in lower case', { type: 'point', coordinates: [-101, 31] }, /GeoJSON Point/],
    ['a bare [lon, lat] array', [-101, 31], /GeoJSON Point/],
    ['a string', 'POINT(-101 31)', /GeoJSON Point/],
  ])('insert: %s → VALIDATION naming index and field, nothing written', async (_name, bad, reason) => {
    const before = await store.query('Well', {});
    const r = await store.insert('Well', [
      { pwi: 'N1', surfaceLoc: point(-101.5, 31.5) },
      { pwi: 'N2', surfaceLoc: bad as never },
    ]);
    expect(r.success).toBe(false);
    expect(r.count).toBe(0);
    expect(r.insertedIds).toEqual([]);
    expect(r.errors).toHaveLength(1);
    expect(r.errors[0]).toMatchObject({ code: 'VALIDATION', index: 1, field: 'surfaceLoc' });
    expect(r.errors[0]!.message).toMatch(reason);
    expect(r.errors[0]!.message).toContain('surfaceLoc');
    const after = await store.query('Well', {});
    expect(after.total).toBe(before.total);
    expect((await store.query('Well', { pwi: { in: ['N1', 'N2'] } })).data).toEqual([]);
    expect(rtreeRows()).toBe(2);
  });

  it('insert: an invalid point in another GeoPoint field names that field', async () => {
    const r = await store.insert('Well', [{ pwi: 'N1', bottomHoleLoc: { type: 'Point', coordinates: [0, 95] } }]);
    expect(r.success).toBe(false);
    expect(r.errors[0]).toMatchObject({ code: 'VALIDATION', index: 0, field: 'bottomHoleLoc' });
    expect((await store.query('Well', { pwi: 'N1' })).data).toEqual([]);
  });

  it('insert: every bad point of the request is reported', async () => {
    const r = await store.insert('Well', [
      { pwi: 'N1', surfaceLoc: { type: 'Point', coordinates: [0, 91] } },
      { pwi: 'N2', surfaceLoc: point(0, 0) },
      { pwi: 'N3', midPointLoc: { type: 'LineString', coordinates: [0, 0] } as never },
    ]);
    expect(r.success).toBe(false);
    expect(r.errors.map((e) => [e.code, e.index, e.field])).toEqual([
      ['VALIDATION', 0, 'surfaceLoc'],
      ['VALIDATION', 2, 'midPointLoc'],
    ]);
    expect((await store.query('Well', {})).total).toBe(3);
  });

  it('replace: an invalid point fails the request and writes nothing', async () => {
    const a = (await store.query('Well', { pwi: 'A' })).data[0]!;
    const r = await store.replace('Well', [
      { id: a.id!, pwi: 'A', surfaceLoc: point(10, 10) },
      { pwi: 'N1', surfaceLoc: { type: 'Point', coordinates: [0, 91] } },
    ]);
    expect(r.success).toBe(false);
    expect(r.errors[0]).toMatchObject({ code: 'VALIDATION', index: 1, field: 'surfaceLoc' });
    expect((await store.query('Well', { surfaceLoc: { bounds: [9, 9, 11, 11] } })).data).toEqual([]);
    expect((await store.query('Well', { surfaceLoc: { bounds: [-102, 31, -101, 32] } })).data.map((d) => d.pwi)).toEqual(['A']);
  });

  it('update: an invalid point is a VALIDATION error naming the field; nothing changes', async () => {
    const r = await store.update('Well', { pwi: 'A' }, { surfaceLoc: { type: 'Point', coordinates: [-101, 91] } });
    expect(r.success).toBe(false);
    expect(r.errors[0]).toMatchObject({ code: 'VALIDATION', field: 'surfaceLoc' });
    expect(r.errors[0]!.message).toMatch(/latitude 91/);
    expect((await store.query('Well', { surfaceLoc: { bounds: [-102, 31, -101, 32] } })).data.map((d) => d.pwi)).toEqual(['A']);
  });
});
