/** consolidata through its public API (the built dist), on a file in WAL mode, as users run it. */
import fs from 'node:fs';
import { apiWorkloads, mustOf } from './api.mjs';

const must = mustOf('consolidata');

export async function create({ file, DataStore, storeOptions }) {
  let store;
  const remove = () => { for (const s of ['', '-wal', '-shm']) fs.rmSync(file + s, { force: true }); };
  const { q, ...shared } = apiWorkloads(() => store, must);

  return {
    ...shared,
    name: 'consolidata',
    async reset() {
      store?.close();
      remove();
      store = DataStore.open(file, storeOptions);
    },
    near: async (point, maxDistance) => (await q({ surfaceLoc: { near: { point, maxDistance } } })).count,
    async nearest(point, maxDistance) {
      const r = await q({ surfaceLoc: { near: { point, maxDistance } } }, { sortBy: 'surfaceLoc', limit: 10 });
      return `${r.count}/${r.total}`;
    },
    // Every document, 1,000 a page, each page after the last by the store's keyset cursor.
    async pageAll(size) {
      let n = 0;
      let cursor;
      for (;;) {
        const r = await q({}, { limit: size, ...(cursor ? { cursor } : {}) });
        n += r.count;
        if (!r.hasCursor) return n;
        cursor = r.cursor;
      }
    },
    async iterateAll() {
      let n = 0;
      for await (const d of store.iterate('Well', {})) if (d) n++;
      return n;
    },
    // What `consolidata export` does: iterate the matches and write each as a line of NDJSON.
    async exportRange(lt) {
      let n = 0;
      let bytes = 0;
      for await (const d of store.iterate('Well', { spudDate: { lt } })) {
        bytes += JSON.stringify(d).length + 1;
        n++;
      }
      return bytes > 0 ? n : 0;
    },
    closeForOpen() { store.close(); },
    async openAndQuery(pwi) {
      store = DataStore.open(file, storeOptions);
      return (await q({ pwi })).count;
    },
    get store() { return store; },
    fileBytes: () => fs.statSync(file).size,
    close() { store?.close(); remove(); },
  };
}
