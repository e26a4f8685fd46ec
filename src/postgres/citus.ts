/**
 * Scale-out on Citus (README "Scaling out"): which column spreads each type over the shards. Citus distributes a
 * table by one column, co-locates rows of equal values across co-located tables, and enforces a unique index only
 * when it holds that column. The layout (`openPostgres(…, { citus: true })`) adds a column `dk` to every table, puts
 * it first in the primary key and in every unique index, fills it from the type's distribution field (the id when a
 * document has none), and distributes the tables by it; a query that fixes that field by equality also fixes `dk`, so
 * it runs on one shard. Run on Citus 13.0.5 by `npm run test:citus`.
 */
import { Catalogue, catalogueOf, TYPES, type CatalogueShape } from '../catalogue/index.js';
import { literal } from '../sql/fragment.js';
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
 * The statements that distribute a store's tables once they exist (run them on the Citus coordinator, in this order):
 * the Well table first, then the tables distributed by `pwi`, co-located with it, so a well's documents of every type
 * share a shard; then the others. Each does nothing when its table is distributed already, so they may run again.
 * `openPostgres(…, { citus: true })` runs them itself, with the tables it creates.
 * @example for (const sql of citusStatements('wells')) await client.query(sql);
 */
export function citusStatements(schema = 'public', types: CatalogueShape | Catalogue = TYPES): string[] {
  const catalogue = types instanceof Catalogue ? types : catalogueOf(types);
  const dist = distributionOf(catalogue);
  const wells = catalogue.resolve('Well') && dist.get('Well')?.field === 'pwi' ? qualified(schema, docsTable('Well')) : null;
  // A table co-located with Well is distributed after it: Citus refuses to co-locate with a table not yet distributed.
  const names = [...catalogue.names].sort((a, b) => Number(b === 'Well') - Number(a === 'Well'));
  return names.map((name) => {
    const table = qualified(schema, docsTable(name));
    const colocate = wells && dist.get(name)!.field === 'pwi' && name !== 'Well' ? `, colocate_with => ${literal(wells)}` : '';
    return (
      `SELECT create_distributed_table(${literal(table)}, ${literal('dk')}${colocate}) ` +
      `WHERE NOT EXISTS (SELECT 1 FROM pg_dist_partition WHERE logicalrelid = ${literal(table)}::regclass)`
    );
  });
}

/** The statement answering whether the database has the Citus extension (one row, one boolean). */
export const HAS_CITUS = `SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus')`;

/** What `openPostgres(…, { citus: true })` says on a database without Citus. */
export function noCitus(schema: string): Error {
  return new Error(
    `openPostgres: citus: true distributes the tables of schema "${schema}" over a Citus cluster, and this database has no Citus extension; ` +
      'connect to the coordinator of a Citus cluster (CREATE EXTENSION citus there), or open without citus',
  );
}
