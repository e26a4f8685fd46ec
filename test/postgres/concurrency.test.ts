/**
 * Four processes write to one PostgreSQL schema at once: inserts of colliding keys, updates of shared documents (dotted
 * paths, rewritten in the client; top-level fields, one statement) and upserts of the same new ids. Every acknowledged
 * write must be there, no key twice, no update lost.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgres } from '../../src/postgres/index.js';
import { pgCluster, postgresBackend } from '../helpers/backends.js';

postgresBackend();

const WORKERS = 4;
const KEYS = 200;
const SHARED = 5;
const REPLACED = 20;
const SCHEMA = 'concurrency';

let script: string;
let dir: string;

beforeAll(async () => {
  // Bundled into a plain Node script inside the project, so it resolves pg and re2 from node_modules.
  const base = new URL('../../node_modules/.cache/', import.meta.url).pathname;
  mkdirSync(base, { recursive: true });
  dir = mkdtempSync(join(base, 'pg-worker-'));
  script = join(dir, 'worker.mjs');
  await build({ entryPoints: [new URL('./worker.ts', import.meta.url).pathname], bundle: true, platform: 'node', format: 'esm', target: 'node20', outfile: script, packages: 'external', logLevel: 'error' });
}, 60_000);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

function runWorker(url: string, n: number): Promise<{ code: number | null; lines: string[]; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [script, url, SCHEMA, String(n), String(1000 + n * 7919)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('exit', (code) => resolve({ code, lines: out.split('\n').filter(Boolean), stderr: err }));
  });
}

describe('four processes on one PostgreSQL schema', () => {
  it('lose no acknowledged write, store no key twice and lose no update', async () => {
    const { cluster } = pgCluster();
    const store = await openPostgres(cluster.url, { schema: SCHEMA });
    try {
      // The shared documents the workers update, made before they start.
      const seeded = await store.insert('Well', Array.from({ length: SHARED }, (_, i) => ({ pwi: `S-${i}`, extra: {} })));
      expect(seeded.success).toBe(true);

      const runs = await Promise.all(Array.from({ length: WORKERS }, (_, n) => runWorker(cluster.url, n)));
      for (const r of runs) {
        expect(r.stderr).toBe('');
        expect(r.lines.filter((l) => l.startsWith('error'))).toEqual([]);
        expect(r.lines.at(-1)).toBe('done');
        expect(r.code).toBe(0);
      }
      const lines = runs.flatMap((r) => r.lines);

      // Colliding keys: each K pwi went in exactly once, by the one request that was told so.
      const acked = lines.filter((l) => l.startsWith('ack insert ')).map((l) => l.split(' ').slice(2) as [string, string]);
      const dups = lines.filter((l) => l.startsWith('dup ')).length;
      expect(acked).toHaveLength(KEYS);
      expect(acked.length + dups).toBe(WORKERS * KEYS);
      const wells = (await store.query('Well', { pwi: { regex: '^K-' } })).data;
      expect(wells).toHaveLength(KEYS);
      expect(new Set(wells.map((w) => w.pwi)).size).toBe(KEYS);
      const idOf = new Map(wells.map((w) => [w.pwi, w.id]));
      for (const [pwi, id] of acked) expect(idOf.get(pwi), pwi).toBe(id);

      // Shared documents: every acknowledged update left its key (a lost update would drop the others').
      const updates = lines.filter((l) => l.startsWith('ack update ')).map((l) => l.split(' ').slice(2) as [string, string]);
      expect(updates).toHaveLength(WORKERS * 40);
      const shared = new Map((await store.query('Well', { pwi: { regex: '^S-' } })).data.map((w) => [w.pwi as string, w.extra as Record<string, Record<string, number>>]));
      for (const [pwi, key] of updates) {
        const [w, u] = key.split('.') as [string, string];
        expect(shared.get(pwi)?.[w]?.[u], `${pwi} ${key}`).toBe(Number(u.slice(1)));
      }

      // Top-level fields of shared documents, each owned by one worker: the last acknowledged value of each stays.
      const last = new Map<string, string>();
      for (const l of lines.filter((x) => x.startsWith('ack set '))) {
        const [pwi, field, value] = l.split(' ').slice(2) as [string, string, string];
        last.set(`${pwi} ${field}`, value);
      }
      expect(lines.filter((l) => l.startsWith('ack set ')).length).toBe(WORKERS * 40);
      const finals = new Map((await store.query('Well', { pwi: { regex: '^S-' } })).data.map((w) => [w.pwi as string, w as Record<string, unknown>]));
      for (const [k, value] of last) {
        const [pwi, field] = k.split(' ') as [string, string];
        expect(finals.get(pwi)?.[field], k).toBe(value);
      }

      // Upserts of one new id from every worker: one document per id, each acknowledged.
      expect(lines.filter((l) => l.startsWith('ack replace ')).length).toBe(WORKERS * REPLACED);
      const replaced = (await store.query('Well', { pwi: { regex: '^R-' } })).data;
      expect(replaced.map((d) => d.id).sort()).toEqual(Array.from({ length: REPLACED }, (_, i) => `R-${i}`).sort());
    } finally {
      await store.close();
    }
  });
});
