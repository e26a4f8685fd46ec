/** The explorer's entry: routes the page's hash (#/query, #/map, #/well/<id>, #/feed) to its views. */
import 'uplot/dist/uPlot.min.css';
import './app.css';
import { apiUrl, h } from './api.js';
import { showFeed } from './feed.js';
import { showMap } from './map.js';
import { showQuery } from './query.js';
import { showWell } from './well.js';

const view = document.getElementById('view')!;
document.getElementById('api-docs')!.setAttribute('href', apiUrl('/docs'));

async function route(): Promise<void> {
  const [, name = 'query', arg] = /^#\/([^/]*)\/?(.*)$/.exec(location.hash) ?? [];
  document.querySelectorAll('nav a').forEach((a) => a.classList.toggle('active', a.getAttribute('data-view') === name));
  view.dataset.view = name;
  view.setAttribute('aria-busy', 'true');
  try {
    if (name === 'map') await showMap(view);
    else if (name === 'well') await showWell(view, decodeURIComponent(arg ?? ''));
    else if (name === 'feed') await showFeed(view);
    else await showQuery(view);
  } catch (e) {
    view.replaceChildren(h('p', { class: 'errors', role: 'alert' }, `could not reach the store: ${(e as Error).message}`));
  } finally {
    view.removeAttribute('aria-busy');
  }
}

window.addEventListener('hashchange', () => void route());
void route();
