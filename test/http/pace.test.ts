/** The streamed answers' shared budget of bytes a turn of the event loop (src/http/pace.ts). */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
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
