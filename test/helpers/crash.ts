import Database from 'better-sqlite3';
import { expect } from 'vitest';

/**
 * What a writer killed among its writes must leave in `file`: an intact database, every acknowledged batch of `batch`
 * Wells whole, every other batch whole or absent, and the R*Tree holding exactly the documents' points.
 * @example expectWholeBatches(file, [0, 1, 2], 50)
 */
export function expectWholeBatches(file: string, acked: number[], batch: number): void {
  const db = new Database(file);
  try {
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    const perBatch = new Map<string, number>();
    for (const row of db.prepare(`SELECT json_extract(doc, '$.wellId') AS b, count(*) AS n FROM docs_Well GROUP BY b`).all() as { b: string; n: number }[]) {
      perBatch.set(row.b, row.n);
    }
    for (const b of acked) expect(perBatch.get(`w-${b}`), `acknowledged batch ${b}`).toBe(batch);
    for (const [b, n] of perBatch) expect(n, `batch ${b} is whole or absent`).toBe(batch);
    // At their coordinates: float32, rounded outward.
    const docs = db.prepare(`SELECT rowid AS id, json_extract(doc, '$.surfaceLoc.coordinates[0]') AS x, json_extract(doc, '$.surfaceLoc.coordinates[1]') AS y FROM docs_Well`).all() as { id: number; x: number; y: number }[];
    const tree = new Map((db.prepare('SELECT id, minX, maxX, minY, maxY FROM "rtree._well.surface_loc"').all() as { id: number; minX: number; maxX: number; minY: number; maxY: number }[]).map((r) => [r.id, r]));
    expect(tree.size).toBe(docs.length);
    for (const d of docs) {
      const r = tree.get(d.id)!;
      expect(r.minX <= d.x && d.x <= r.maxX && r.minY <= d.y && d.y <= r.maxY).toBe(true);
    }
  } finally {
    db.close();
  }
}
