/**
 * Scale-out on Citus (README "Scaling out"): which column spreads each type over the shards. Citus distributes a
 * table by one column, co-locates rows of equal values across co-located tables, and enforces a unique index only
 * when it holds that column. The layout (`openPostgres(…, { citus: true })`) adds a column `dk` to every table, puts
 * it first in the primary key and in every unique index, and fills it from the type's distribution field (the id
 * when a document has none); a query that fixes that field by equality also fixes `dk`, so it runs on one shard.
 * Nothing here was run on Citus (it cannot be installed where this was written); the layout runs on plain PostgreSQL.
 */
import { Catalogue, catalogueOf, TYPES, type CatalogueShape } from '../catalogue/index.js';
import { docsTable, qualified } from './names.js';
import type { DistributionKey } from './schema.js';

/**
 * The distribution field of the built-in types that do not simply follow the rule (a type with `pwi` is distributed
 * by `pwi`, any other by `id`). WellIdentifier maps identifiers to wells and is unique on (identifier,
 * identifierType): distributed by `identifier`, that key stays enforceable.
 */
export const DISTRIBUTION: Readonly<Record<string, string>> = { WellIdentifier: 'identifier' };

/**
 * The distribution field of every type of a catalogue (the built-in one unless given): `pwi` for well-centric types
 * (a well's documents of every type co-locate on one shard), DISTRIBUTION's choice, else `id`.
 * @example distributionOf().get('DailyProduction') // { field: 'pwi' }
 */
export function distributionOf(types: CatalogueShape | Catalogue = TYPES): ReadonlyMap<string, DistributionKey> {
  const catalogue = types instanceof Catalogue ? types : catalogueOf(types);
  const out = new Map<string, DistributionKey>();
  for (const name of catalogue.names) {
    const info = catalogue.resolve(name)!;
    const chosen = DISTRIBUTION[name];
    const field = chosen && info.fields.has(chosen) ? chosen : info.fields.has('pwi') ? 'pwi' : 'id';
    out.set(name, { field });
  }
  return out;
}

/**
 * The statements that distribute a store's tables once they exist (run them on the Citus coordinator): tables
 * distributed by `pwi` are co-located with the Well table, so a well's documents of every type share a shard.
 * @example for (const sql of citusStatements('wells')) await client.query(sql);
 */
export function citusStatements(schema = 'public', types: CatalogueShape | Catalogue = TYPES): string[] {
  const catalogue = types instanceof Catalogue ? types : catalogueOf(types);
  const dist = distributionOf(catalogue);
  const wells = catalogue.resolve('Well') && dist.get('Well')?.field === 'pwi' ? qualified(schema, docsTable('Well')) : null;
  const literal = (s: string) => `'${s.replace(/'/g, "''")}'`;
  return catalogue.names.map((name) => {
    const table = qualified(schema, docsTable(name));
    const colocate = wells && dist.get(name)!.field === 'pwi' && name !== 'Well' ? `, colocate_with => ${literal(wells)}` : '';
    return `SELECT create_distributed_table(${literal(table)}, ${literal('dk')}${colocate})`;
  });
}
