/** The change feed, live: `GET /data/changes` as Server-Sent Events, newest event first. */
import { apiUrl, call, errorList, h } from './api.js';

interface Change {
  seq: number;
  type: string;
  op: string;
  id: string;
  at: number | string;
}

const list = h('ol', { id: 'feed', reversed: '' });
let source: EventSource | undefined;
let refusal: HTMLElement | undefined;

/** Opens the feed once (it keeps running while other views show) and renders it into `root`. */
export async function showFeed(root: HTMLElement): Promise<void> {
  if (!source && !refusal) {
    // A refusal (no feed on this store) is an envelope on the JSON route; EventSource would only see an error.
    const probe = await call('/data/changes?limit=1&wait=0');
    if (!probe.success) refusal = errorList(probe);
    else {
      source = new EventSource(apiUrl('/data/changes'));
      source.addEventListener('open', () => list.setAttribute('data-open', 'true'));
      source.addEventListener('change', (e) => {
        const c = JSON.parse((e as MessageEvent<string>).data) as Change;
        const li = h('li', { 'data-seq': String(c.seq), 'data-type': c.type, 'data-op': c.op, 'data-id': c.id }, `#${c.seq} ${c.op} ${c.type} ${c.id} `, h('time', {}, new Date(c.at).toISOString()));
        list.prepend(li);
        while (list.children.length > 500) list.lastElementChild!.remove();
      });
    }
  }
  root.replaceChildren(h('h2', {}, 'Live change feed'), refusal ?? list);
}
