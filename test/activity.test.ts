/**
 * Activity ids: every write request has one, answered in its envelope and stamped on what it creates
 * (createdActivityId) and changes (lastUpdatedActivityId); a caller may pass its own, also over HTTP.
 */
import { describe, expect, it } from 'vitest';
import { createFetchHandler } from '../src/http/index.js';
import { backends } from './helpers/backends.js';

const HEX24 = /^[0-9a-f]{24}$/;

describe.each(backends())('activity ids on $name', (backend) => {
  it('each write answers its own new id, stamped on the documents it creates and changes', async () => {
    const store = await backend.open();
    try {
      const inserted = await store.insert('Well', [{ pwi: 'A1' }, { pwi: 'A2' }]);
      expect(inserted.activityId).toMatch(HEX24);
      const [a1] = (await store.query('Well', { pwi: 'A1' })).data;
      expect(a1).toMatchObject({ createdActivityId: inserted.activityId, lastUpdatedActivityId: inserted.activityId });

      const updated = await store.update('Well', { pwi: 'A1' }, { statusCurrent: 'Producing' });
      expect(updated.activityId).toMatch(HEX24);
      expect(updated.activityId).not.toBe(inserted.activityId);
      const [after] = (await store.query('Well', { pwi: 'A1' })).data;
      expect(after).toMatchObject({ createdActivityId: inserted.activityId, lastUpdatedActivityId: updated.activityId });

      // A replacement keeps the activity that created the document, as it keeps createdAt.
      const replaced = await store.replace('Well', [{ id: a1!.id, pwi: 'A1', statusCurrent: 'Shut-in' }]);
      const [again] = (await store.query('Well', { pwi: 'A1' })).data;
      expect(again).toMatchObject({ createdActivityId: inserted.activityId, lastUpdatedActivityId: replaced.activityId });

      const deleted = await store.delete('Well', { pwi: 'A2' });
      expect(deleted).toMatchObject({ count: 1 });
      expect(deleted.activityId).toMatch(HEX24);
      // Reads are not activities.
      expect((await store.query('Well', {})).activityId).toBeNull();
    } finally {
      await store.close();
    }
  });

  it("a caller's own id is used by every request it is given to", async () => {
    const store = await backend.open();
    try {
      const activityId = 'migration-2024-06';
      expect((await store.insert('Well', [{ pwi: 'B1' }], { activityId })).activityId).toBe(activityId);
      expect((await store.update('Well', { pwi: 'B1' }, { fracStages: 3 }, { activityId })).activityId).toBe(activityId);
      expect((await store.dynamic.insertMany([{ type: 'Well', docs: [{ pwi: 'B2' }] }], { activityId }))[0]!.activityId).toBe(activityId);
      expect((await store.load('Well', [{ pwi: 'B3' }], { activityId })).activityId).toBe(activityId);
      const docs = (await store.query('Well', {}, { sortBy: 'pwi' })).data;
      expect(docs.map((d) => [d.pwi, d.createdActivityId, d.lastUpdatedActivityId])).toEqual([
        ['B1', activityId, activityId],
        ['B2', activityId, activityId],
        ['B3', activityId, activityId],
      ]);
      expect((await store.delete('Well', { pwi: 'B3' }, { activityId })).activityId).toBe(activityId);
    } finally {
      await store.close();
    }
  });

  it('a refused request still answers its activity id and stamps nothing; a bad id is INVALID_REQUEST and writes nothing', async () => {
    const store = await backend.open();
    try {
      const refused = await store.dynamic.insert('Well', [{ pwi: 'C1' }, { pwi: 'C2', fracStages: 'x' }], { atomic: true });
      expect(refused.success).toBe(false);
      expect(refused.errors[0]!.code).toBe('VALIDATION');
      expect(refused.activityId).toMatch(HEX24);
      expect((await store.query('Well', {})).total).toBe(0);
      for (const activityId of ['', 42, 'x'.repeat(300)]) {
        const bad = await store.dynamic.insert('Well', [{ pwi: 'C3' }], { activityId });
        expect(bad.errors[0]).toMatchObject({ code: 'INVALID_REQUEST', field: 'options.activityId' });
        expect(bad.activityId).toBeNull();
      }
      expect((await store.dynamic.update('Well', {}, { fracStages: 1 }, { activityId: '' })).errors[0]!.code).toBe('INVALID_REQUEST');
      expect((await store.query('Well', {})).total).toBe(0);
    } finally {
      await store.close();
    }
  });
});

describe('activity ids over HTTP', () => {
  it('the x-activity-id header names the activity of both route families', async () => {
    const [sqlite] = backends();
    const store = await sqlite!.open();
    try {
      const handle = createFetchHandler(store);
      const send = async (method: string, path: string, body: unknown, activity?: string) => {
        const res = await handle(new Request(`http://x/api${path}`, { method, headers: { 'content-type': 'application/json', ...(activity ? { 'x-activity-id': activity } : {}) }, body: JSON.stringify(body) }));
        return (await res.json()) as { activityId: string | null; success: boolean };
      };
      expect((await send('POST', '/data', { type: 'Well', data: [{ pwi: 'H1' }], options: { atomic: true } }, 'op-1')).activityId).toBe('op-1');
      expect((await send('PATCH', '/data', { type: 'Well', query: { pwi: 'H1' }, body: { fracStages: 2 } }, 'op-1')).activityId).toBe('op-1');
      expect((await send('POST', '/v1/data', { type: 'Well', request: 'insert', body: [{ pwi: 'H2' }] }, 'op-2')).activityId).toBe('op-2');
      expect((await send('POST', '/data', { type: 'Well', data: [{ pwi: 'H3' }] })).activityId).toMatch(HEX24);
      const docs = (await store.query('Well', {}, { sortBy: 'pwi' })).data;
      expect(docs.map((d) => [d.pwi, d.createdActivityId, d.lastUpdatedActivityId])).toEqual([
        ['H1', 'op-1', 'op-1'],
        ['H2', 'op-2', 'op-2'],
        ['H3', expect.stringMatching(HEX24), expect.stringMatching(HEX24)],
      ]);
    } finally {
      await store.close();
    }
  });
});
