/** The streamed answers' shared budget of bytes a turn of the event loop (src/http/pace.ts). */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { describe, expect, it, vi } from 'vitest';
import type { StoreLike } from '../../src/core/store-like.js';
import { createNodeHandler } from '../../src/http/node.js';
import { Pacer } from '../../src/http/pace.js';

describe('Pacer', () => {
  it('grants at most the budget (plus one write) between two turns of the event loop, every writer in its turn, none lost', async () => {
    const pacer = new Pacer(1000);
    const granted: number[] = [0];
    let turns = 0;
    let stop = false;
    // A probe: each of its iterations is one turn of the event loop in which other work (I/O) gets its chance.
    const probe = (async () => {
      while (!stop) {
        await nextTurn();
        turns++;
        granted.push(0);
      }
    })();
    const writer = async (id: number, writes: number) => {
      const order: number[] = [];
      for (let i = 0; i < writes; i++) {
        const wait = pacer.take(300);
        if (wait) await wait;
        granted[granted.length - 1]! += 300;
        order.push(i);
      }
      return { id, order };
    };
    const done = await Promise.all(Array.from({ length: 20 }, (_, id) => writer(id, 10)));
    stop = true;
    await probe;
    expect(done.every((d) => d.order.length === 10)).toBe(true);
    expect(granted.reduce((a, b) => a + b, 0)).toBe(20 * 10 * 300);
    // 60,000 bytes at 1,000 (+ one write) a turn: many turns, none over the budget and its last write.
    expect(Math.max(...granted)).toBeLessThanOrEqual(1000 + 300);
    expect(turns).toBeGreaterThanOrEqual(60_000 / 1300);
  });

  it('grants at once while the turn has budget left, and asks for no turn once idle', async () => {
    const pacer = new Pacer(1000);
    expect(pacer.take(10)).toBeUndefined();
    expect(pacer.take(10)).toBeUndefined();
    expect(pacer.take(2000)).toBeUndefined();
    const later = pacer.take(10);
    expect(later).toBeInstanceOf(Promise);
    await later;
    await nextTurn();
    await nextTurn();
    expect(pacer.take(10)).toBeUndefined();
  });
});

describe('streamed answers waiting their turn', () => {
  it('a client that leaves while its stream waits for the budget has its answer closed (the query stops)', async () => {
    const chunk = 'x'.repeat(200 * 1024);
    let started = 0;
    let returned = 0;
    const store = {
      async query() {
        throw new Error('answered by queryStream');
      },
      async queryStream() {
        started++;
        let i = 0;
        return {
          failure: null,
          cancel() {},
          [Symbol.asyncIterator]() {
            return {
              next: async () => (i++ < 200 ? { done: false, value: chunk } : { done: true, value: undefined }),
              return: async () => {
                returned++;
                return { done: true, value: undefined };
              },
            };
          },
        };
      },
    } as unknown as StoreLike;
    const handler = createNodeHandler(store);
    const server = http.createServer((req, res) => handler(req, res));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as AddressInfo;
    const body = JSON.stringify({ type: 'Well', query: {} });
    try {
      // 20 streams at once share the budget; each client leaves after 600 KiB.
      await Promise.all(
        Array.from(
          { length: 20 },
          () =>
            new Promise<void>((resolve) => {
              const req = http.request({ port, host: '127.0.0.1', method: 'POST', path: '/api/data/query', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
                let got = 0;
                res.on('data', (d: Buffer) => {
                  got += d.length;
                  if (got > 600 * 1024) {
                    req.destroy();
                    resolve();
                  }
                });
                res.on('end', resolve);
              });
              req.on('error', () => resolve());
              req.end(body);
            }),
        ),
      );
      await vi.waitFor(() => expect({ started, returned }).toEqual({ started: 20, returned: 20 }), { timeout: 10_000 });
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });
});
