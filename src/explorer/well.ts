/** A well's page: its document, its daily oil, gas and water as a chart (uPlot), and its versions where history is on. */
import uPlot from 'uplot';
import { errorList, h, query, queryAll, type Doc } from './api.js';

interface Daily {
  prodDate: string;
  oilVol?: number;
  gasVol?: number;
  waterVol?: number;
}

/** Renders the page of the Well `id` into `root`. */
export async function showWell(root: HTMLElement, id: string): Promise<void> {
  const found = await query('Well', { id });
  if (!found.success || !found.data[0]) {
    root.replaceChildren(h('h2', {}, `Well ${id}`), found.success ? h('p', { class: 'errors', role: 'alert' }, 'no such Well') : errorList(found));
    return;
  }
  const well = found.data[0];
  const key = well.pwi ? { pwi: well.pwi } : { wellId: well.wellId };
  const chart = h('div', { id: 'production', class: 'chart' });
  const history = h('section', { id: 'history' }, h('h2', {}, 'History'));
  root.replaceChildren(
    h('div', { class: 'well-view' }, h('div', { class: 'main' }, h('h2', { id: 'well-title' }, `${String(well.name ?? well.pwi ?? id)}`), chart, history), h('aside', {}, h('h2', {}, 'Document'), h('pre', { class: 'document', id: 'well-document' }, JSON.stringify(well, null, 2)))),
  );
  const [daily, versions] = await Promise.all([
    queryAll<Daily>('DailyProduction', key, { sortBy: 'prodDate', fields: ['prodDate', 'oilVol', 'gasVol', 'waterVol'] }),
    query('VersionDocument', { type: 'Well', oid: id }, { sortBy: 'versionTimestamp', limit: 200 }),
  ]);
  if (!daily.success) chart.replaceChildren(errorList(daily));
  else plot(chart, daily.data);
  showHistory(history, versions.success ? versions.data : []);
}

function plot(el: HTMLElement, rows: Daily[]): void {
  el.dataset.points = String(rows.length);
  if (!rows.length) {
    el.replaceChildren(h('p', {}, 'No DailyProduction for this well.'));
    return;
  }
  const x = rows.map((r) => Date.parse(r.prodDate) / 1000);
  const series = (k: 'oilVol' | 'gasVol' | 'waterVol') => rows.map((r) => r[k] ?? null);
  const width = Math.max(320, el.clientWidth || 800);
  new uPlot(
    {
      width,
      height: 320,
      title: 'Daily production',
      series: [{}, { label: 'oil (bbl)', stroke: '#2f7d32' }, { label: 'gas (Mcf)', stroke: '#d62728' }, { label: 'water (bbl)', stroke: '#1f6feb' }],
      axes: [{}, { label: 'volume / day' }],
    },
    [x, series('oilVol'), series('gasVol'), series('waterVol')],
    el,
  );
}

function showHistory(el: HTMLElement, versions: Doc[]): void {
  el.dataset.versions = String(versions.length);
  if (!versions.length) {
    el.append(h('p', {}, 'No versions: history is off for Well (serve --history Well) or the well was never changed since.'));
    return;
  }
  const rows = versions.map((v) =>
    h('tr', {}, h('td', {}, new Date(Number(v.versionTimestamp)).toISOString()), h('td', {}, String(v.event)), h('td', {}, String(v.createdBy ?? '')), h('td', {}, h('details', {}, h('summary', {}, 'body'), h('pre', {}, JSON.stringify(v.body, null, 2))))),
  );
  el.append(h('table', { class: 'rows' }, h('thead', {}, h('tr', {}, h('th', {}, 'when'), h('th', {}, 'event'), h('th', {}, 'by'), h('th', {}, ''))), h('tbody', {}, ...rows)));
}
