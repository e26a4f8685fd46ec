/** consolidata through its public API (the built dist), on a file in WAL mode, as users run it. */
import fs from 'node:fs';

function must(env) {
  if (!env.success) throw new Error(`consolidata: ${env.message} ${JSON.stringify(env.errors.slice(0, 3))}`);
  return env;
}

export async function create({ file, DataStore, storeOptions }) {
  let store;
  const remove = () => { for (const s of ['', '-wal', '-shm']) fs.rmSync(file + s, { force: true }); };
  const q = async (query, options) => must(await store.query('Well', query, options));

  return {
    name: 'consolidata',
    async reset() {
      store?.close();
      remove();
      store = DataStore.open(file, storeOptions);
    },
    async bulkInsert(docs) { return must(await store.insert('Well', docs)).count; },
    async insertOne(doc) { return must(await store.insert('Well', [doc])).count; },
    async removePwis(list) { return must(await store.delete('Well', { pwi: { in: list } })).count; },
    eqPwi: async (pwi) => (await q({ pwi })).count,
    inPwi: async (list) => (await q({ pwi: { in: list } })).count,
    dateRange: async (gte, lt) => (await q({ spudDate: { gte, lt } })).count,
    numGt: async (v) => (await q({ lateralLength: { gt: v } })).count,
    regexPrefix: async (p) => (await q({ name: { regex: `^${p}` } })).count,
    bounds: async (b) => (await q({ surfaceLoc: { bounds: b } })).count,
    polygon: async (rings) => (await q({ surfaceLoc: { polygon: rings } })).count,
    async combined(b, status) {
      const r = await q({ surfaceLoc: { bounds: b }, statusCurrent: status }, { sortBy: 'spudDate', sortOrder: -1, limit: 50 });
      return `${r.count}/${r.total}`;
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
    async updateMany(basin, value) { return must(await store.update('Well', { basinName: basin }, { statusCurrent: value })).count; },
    async deleteMany(gte, lt) { return must(await store.delete('Well', { spudDate: { gte, lt } })).count; },
    async dpBulkInsert(rows) { return must(await store.insert('DailyProduction', rows)).count; },
    dpHistory: async (pwi) => must(await store.query('DailyProduction', { pwi }, { sortBy: 'prodDate' })).count,
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
