/**
 * 24-hex ObjectId-style ids: 4 bytes of seconds, 5 random bytes per process, a 3-byte counter — time-ordered. And the
 * seeded PRNG deterministic ids and the sample data draw from.
 */
import { randomBytes } from 'node:crypto';

const processPart = randomBytes(5).toString('hex');
let counter = randomBytes(3).readUIntBE(0, 3);
let lastSecond = 0;

export function newId(now = Date.now()): string {
  const second = Math.floor(now / 1000);
  if (second !== lastSecond) {
    lastSecond = second;
    // Restart low within each second so ids of one process stay ordered when the counter would wrap.
    counter = 0;
  }
  counter = (counter + 1) % 0x1000000;
  return (
    (second >>> 0).toString(16).padStart(8, '0') + processPart + counter.toString(16).padStart(6, '0')
  );
}

/**
 * A deterministic id source: the clock's seconds, 5 bytes drawn once from a seeded PRNG, and a counter from 1.
 * With a fixed clock too, two runs give the same ids in the same order (snapshot tests of envelopes).
 * @example const next = seededIds(42, () => Date.UTC(2024, 0, 1)); next() // '659200807c8ac0ad8a000001'
 */
export function seededIds(seed: number, now: () => number): () => string {
  const next = prng(seed);
  // One byte per step: the low byte of the step's 32 bits.
  const byte = () => (next() * 4294967296) & 0xff;
  const middle = Array.from({ length: 5 }, () => byte().toString(16).padStart(2, '0')).join('');
  let count = 0;
  return () => {
    count = (count + 1) % 0x1000000;
    const second = Math.floor(now() / 1000) >>> 0;
    return second.toString(16).padStart(8, '0') + middle + count.toString(16).padStart(6, '0');
  };
}

/**
 * mulberry32: a tiny seeded PRNG, so the same seed always gives the same numbers, in [0, 1) (seeded ids, sample data).
 * @example const next = prng(42); next() // 0.6011037519201636
 */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
