/** A writable that says it is a terminal, and the screen a terminal would show for what was written to it. */
import { Writable } from 'node:stream';

export class FakeTty extends Writable {
  readonly isTTY = true;
  readonly columns = 200;
  readonly rows = 50;
  text = '';
  override _write(chunk: Buffer | string, _enc: string, done: () => void) {
    this.text += chunk.toString();
    done();
  }
}

/**
 * Replays terminal output (text, \r, \n, and the CSI sequences readline and cli-progress write: cursor moves,
 * line and screen clears) onto a grid; answers its lines, trailing blanks trimmed. A line written onto another
 * without a newline shows glued to it, as on a real terminal.
 */
export function screen(output: string): string[] {
  const rows: string[][] = [[]];
  let row = 0;
  let col = 0;
  const line = () => (rows[row] ??= []);
  for (let i = 0; i < output.length; i++) {
    const ch = output[i]!;
    if (ch === '\x1b') {
      const m = /^\x1b\[(\??)(\d*)(?:;(\d*))?([A-Za-z])/.exec(output.slice(i));
      if (!m) {
        i++; // ESC 7 / ESC 8 (save, restore): not used here
        continue;
      }
      i += m[0].length - 1;
      if (m[1]) continue; // private modes: cursor visibility, line wrapping
      const n = m[2] === '' ? undefined : Number(m[2]);
      switch (m[4]) {
        case 'A': row = Math.max(0, row - (n ?? 1)); break;
        case 'B': row += n ?? 1; break;
        case 'C': col += n ?? 1; break;
        case 'D': col = Math.max(0, col - (n ?? 1)); break;
        case 'G': col = (n ?? 1) - 1; break;
        case 'H': row = (n ?? 1) - 1; col = (m[3] ? Number(m[3]) : 1) - 1; break;
        case 'K': {
          const l = line();
          if ((n ?? 0) === 0) l.length = Math.min(l.length, col);
          else if (n === 1) for (let c = 0; c <= col && c < l.length; c++) l[c] = ' ';
          else l.length = 0;
          break;
        }
        case 'J':
          if ((n ?? 0) === 0) {
            line().length = Math.min(line().length, col);
            rows.length = row + 1;
          }
          break;
        default:
          throw new Error(`screen: unexpected escape sequence ${JSON.stringify(m[0])}`);
      }
      continue;
    }
    if (ch === '\n') {
      row++;
      col = 0;
      continue;
    }
    if (ch === '\r') {
      col = 0;
      continue;
    }
    const l = line();
    while (l.length < col) l.push(' ');
    l[col++] = ch;
  }
  const out: string[] = [];
  for (let r = 0; r < rows.length; r++) out.push((rows[r] ?? []).join('').trimEnd());
  while (out.length && out[out.length - 1] === '') out.pop();
  return out;
}
