/** 24-hex ObjectId-style ids: 4 bytes of seconds, 5 random bytes per process, a 3-byte counter — time-ordered. */
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
