/**
 * A child process that writes to (and reads from) a file store, for the crash and concurrency tests.
 * argv: file, mode ('writer' | 'reader'), tag, batches, batchSize.
 * The writer prints `ack <batch>` after each acknowledged request; the reader prints `bad <batch> <count>`
 * whenever it sees a request in part, and `done <reads> <errors>` at the end. The bulk mode runs one atomic load of a
 * source that never ends, printing `read <n>` every 10,000 documents, until it is killed.
 */
import { DataStore } from '../../src/index.js';

const [file, mode, tag, batchesArg, sizeArg] = process.argv.slice(2);
const batches = Number(batchesArg);
const size = Number(sizeArg);
const journaled = mode === 'journal';
const store = DataStore.open(file!, { busyTimeoutMs: 10_000, ...(journaled ? { changeFeed: true, history: ['Well'] as const, activityLog: true, changeRetention: 1_000_000 } : {}) });

function doc(batch: number, i: number) {
  const x = ((batch * 7919 + i * 104729) % 36000) / 100 - 180;
  const y = ((batch * 104729 + i * 7919) % 18000) / 100 - 90;
  return { pwi: `${tag}-${batch}-${i}`, wellId: `${tag}-${batch}`, fracStages: i, surfaceLoc: { type: 'Point' as const, coordinates: [x, y] } };
}

async function writer() {
  let errors = 0;
  for (let b = 0; b < batches; b++) {
    const docs = Array.from({ length: size }, (_, i) => doc(b, i));
    const r = await store.insert('Well', docs, { atomic: true });
    if (!r.success) {
      errors++;
      process.stderr.write(`error ${b} ${r.message}\n`);
    } else process.stdout.write(`ack ${b}\n`);
    if (b % 5 === 0) {
      const q = await store.query('Well', { wellId: `${tag}-${b}` });
      if (q.count !== size) errors++;
    }
  }
  process.stdout.write(`done ${batches} ${errors}\n`);
}

async function reader() {
  let reads = 0;
  let errors = 0;
  const deadline = Date.now() + 20_000;
  // Read until the writer (tag) has written its last batch, checking that every batch is seen whole or not at all.
  for (;;) {
    const r = await store.query('Well', { pwi: { regex: `^${tag}-` } });
    if (!r.success) {
      errors++;
      process.stderr.write(`error ${r.message}\n`);
    }
    reads++;
    const perBatch = new Map<string, number>();
    for (const d of r.data) perBatch.set(d.wellId as string, (perBatch.get(d.wellId as string) ?? 0) + 1);
    for (const [b, n] of perBatch) if (n !== size) process.stdout.write(`bad ${b} ${n}\n`);
    if (perBatch.size >= batches || Date.now() > deadline) break;
  }
  process.stdout.write(`done ${reads} ${errors}\n`);
}

/** Inserts, updates, replaces and deletes Wells in turn, printing `ack <n>` after each acknowledged request. */
async function journal() {
  for (let b = 0; b < batches; b++) {
    const step = b % 4;
    let r;
    if (step === 0 || b < 4) r = await store.insert('Well', Array.from({ length: size }, (_, i) => doc(b, i)), { atomic: true });
    else if (step === 1) r = await store.update('Well', { wellId: `${tag}-${b - 1}` }, { statusCurrent: `s${b}` });
    else if (step === 2) {
      const q = await store.query('Well', { wellId: `${tag}-${b - 2}` }, { limit: 5 });
      r = await store.replace('Well', q.data.map((d) => ({ id: d.id, pwi: d.pwi, wellId: d.wellId, name: `r${b}` })));
    } else r = await store.delete('Well', { wellId: `${tag}-${b - 3}`, fracStages: { lt: size / 2 } });
    if (!r.success) process.stderr.write(`error ${b} ${r.message}\n`);
    else process.stdout.write(`ack ${b}\n`);
  }
  process.stdout.write(`done ${batches} 0\n`);
}

async function bulk() {
  async function* endless() {
    for (let i = 0; ; i++) {
      if (i % 10_000 === 0) {
        process.stdout.write(`read ${i}\n`);
        // Lets the line out before the next stretch of synchronous writes.
        await new Promise((r) => setImmediate(r));
      }
      yield { ...doc(0, i), pwi: `${tag}-bulk-${i}`, name: `bulk ${i} `.padEnd(400, '.') };
    }
  }
  await store.load('Well', endless(), { atomic: true, batchSize: 10_000 });
}

await (mode === 'reader' ? reader() : mode === 'journal' ? journal() : mode === 'bulk' ? bulk() : writer());
store.close();
