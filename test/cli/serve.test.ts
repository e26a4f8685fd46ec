import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamicStore } from '../../src/dynamic.js';
import { loadSample, serve } from '../../src/cli/serve.js';
import { crashingWorkerScript, removeBundles } from '../server/helpers.js';

describe('serve', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'consolidata-serve-'));
  });
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
    removeBundles();
  });

  it('--sample loads in one transaction: a failure in DailyProduction leaves no Wells behind', async () => {
    // Unique by wellId, every Well's second day of production collides: the DailyProduction part fails.
    const store = DynamicStore.open(':memory:', { uniqueKeys: { DailyProduction: [['wellId']] } });
    await expect(loadSample(store)).rejects.toThrow(/loading the sample \(DailyProduction\): .*duplicate key.*; nothing was loaded/);
    expect((await store.query('Well', {}, { limit: 1 })).total).toBe(0);
    expect((await store.query('DailyProduction', {}, { limit: 1 })).total).toBe(0);
    store.close();
  });

  it('logs every 500 with its cause (a stack, the engine message); the answer says only "internal error" and its request id', async () => {
    const logs: string[] = [];
    const running = await serve({ db: join(dir, 'internal.db'), port: 0, host: '127.0.0.1', log: (l) => logs.push(l), workerScript: await crashingWorkerScript() });
    try {
      // The worker thread running this query dies under it (test/server/fixtures/crashing-worker.ts).
      const res = await fetch(`${running.url}/data/query`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"type":"__crash__","query":{}}' });
      expect(res.status).toBe(500);
      const text = await res.text();
      const body = JSON.parse(text) as { errors: { code: string; message: string }[] };
      expect(body.errors[0]?.code).toBe('INTERNAL');
      expect(body.errors[0]?.message).toMatch(/^internal error\b/);
      expect(text).not.toMatch(/exited|\bat .*\.(?:js|ts):\d+/);
      const logged = logs.find((l) => l.startsWith('internal error'));
      expect(logged, `log: ${logs.join('\n')}`).toMatch(/^internal error \(request (\S+)\): .*exited with code 3[^]*\n\s+at /);
      const requestId = /request (\S+)\)/.exec(logged!)![1]!;
      expect(requestId).not.toBe('undefined');
      expect(text).toContain(requestId);
    } finally {
      await running.stop(100);
    }
  });
});
