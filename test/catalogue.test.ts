import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { BASE_FIELDS, catalogue, DataStore, unwrap } from '../src/index.js';

const specFile = fileURLToPath(new URL('./fixtures/consolidated-data-api.md', import.meta.url));
const store = DataStore.open();
afterAll(() => store.close());

/** Field lists of the spec's data types, read from its markdown: `**Name**: field Kind; field Kind.` */
function specTypes(): Map<string, [string, string][]> {
  const text = readFileSync(specFile, 'utf8');
  const out = new Map<string, [string, string][]>();
  for (const m of text.matchAll(/^\*\*([A-Za-z]+)\*\*(?: and \*\*([A-Za-z]+)\*\*)?[^:]*: (.+)$/gm)) {
    const fields = m[3]!
      .replace(/\. A sample.*$/, '')
      .split(';')
      .map((s) => s.trim().replace(/\.$/, '').split(/\s+/) as [string, string])
      .filter((p) => p.length === 2 && /^[A-Za-z]+$/.test(p[0]));
    out.set(m[1]!, fields);
    if (m[2]) out.set(m[2], fields);
  }
  return out;
}

describe('catalogue', () => {
  it('lists every type of the spec under its wire name', async () => {
    const names = unwrap(await store.types());
    const wire = (n: string) => (n === 'Folder' ? 'Petron' : n);
    for (const name of specTypes().keys()) expect(names).toContain(wire(name));
    for (const name of ['Annotation', 'Comment', 'UnitsDefinition', 'Petron']) expect(names).toContain(name);
    expect(names).toHaveLength(Object.keys(catalogue).length);
    expect(specTypes().size).toBeGreaterThanOrEqual(23);
  });

  it('has every field of the spec with its kind, in order, after the base fields', async () => {
    let checked = 0;
    for (const [name, fields] of specTypes()) {
      checked += fields.length;
      const type = name === 'Folder' ? 'Petron' : name;
      const schema = unwrap(await store.dynamic.schema(type));
      const base = Object.entries(BASE_FIELDS).map(([n, t]) => ({ name: n, type: t }));
      expect(schema.slice(0, base.length), type).toEqual(base);
      const own = schema.slice(base.length).map((f) => [f.name, f.type]);
      expect(own.slice(0, fields.length), type).toEqual(fields);
    }
    expect(checked).toBeGreaterThan(300);
  });

  it('gives UnitsDefinition a String and a <Kind>Unit enumeration for each quantity kind', async () => {
    const schema = unwrap(await store.schema('UnitsDefinition'));
    const kinds = ['Angle', 'Area', 'AreaDensity', 'Density', 'Duration', 'Volume', 'VolumeFlow', 'Mass', 'Length', 'Pressure', 'Force', 'Temperature', 'Torque', 'RotationalSpeed', 'Speed', 'Ratio', 'GasRate', 'GasVolume', 'LiquidRate', 'LiquidVolume', 'BoeRate', 'BoeVolume'];
    for (const k of kinds) {
      expect(schema).toContainEqual({ name: k, type: 'String' });
      expect(schema).toContainEqual({ name: `${k}Unit`, type: `${k}Unit` });
    }
  });

  it('labels geographic fields GeoPoint / GeoMultiPolygon and keeps Comment to the base fields', async () => {
    const well = unwrap(await store.dynamic.schema('well'));
    expect(well.filter((f) => f.type === 'GeoPoint').map((f) => f.name)).toEqual(['surfaceLoc', 'midPointLoc', 'bottomHoleLoc']);
    expect(well).toContainEqual({ name: 'aoi', type: 'GeoMultiPolygon' });
    expect(unwrap(await store.schema('Comment'))).toHaveLength(Object.keys(BASE_FIELDS).length);
    expect(unwrap(await store.dynamic.schema('Folder'))).toContainEqual({ name: 'bounds', type: 'GeoMultiPolygon' });
  });

  it('answers UNKNOWN_TYPE with the closest names', async () => {
    const r = await store.dynamic.schema('DailyProd');
    expect(r.success).toBe(false);
    expect(r.errors[0]!.code).toBe('UNKNOWN_TYPE');
    expect(r.message).toContain('"DailyProduction"');
  });
});
