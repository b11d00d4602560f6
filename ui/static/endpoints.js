// The query endpoints view: the endpoints the key may run; one run with its
// parameters filled in a form shows the SQL, the rows, the time taken and
// whether the endpoint's cache answered. A sandboxed endpoint also takes the
// user's own SQL or LQL over its CTEs.

import {h, clear, formatCount, formatMillis} from './dom.js';
import * as api from './api.js';
import * as time from './time.js';
import * as state from './state.js';

/** maxRenderedRows bounds the rows drawn in the result table. */
const maxRenderedRows = 2000;

export function render(root, ctx) {
  const eps = [...ctx.access.endpoints].sort((a, b) => a.name.localeCompare(b.name));
  const p = ctx.params;
  let current = eps.find((e) => e.name === p.get('name') || e.token === p.get('name')) || null;
  let last = null; // the last answer, to redraw on a time zone change
  let seq = 0;
  let redraw = null; // draws the last answer again (time zone change)

  const list = h('nav', {class: 'ep-list', 'aria-label': 'Endpoints'});
  const detail = h('div', {class: 'ep-detail'});
  clear(root, h('section', {class: 'page endpoints-page'}, h('h1', {class: 'visually-hidden'}, 'Query endpoints'), list, detail));

  function drawList() {
    clear(list, eps.length === 0 ? h('p', {class: 'dim'}, 'No query endpoints.') : h('ul', null, eps.map((e) =>
      h('li', null, h('a', {href: state.href('endpoints', {name: e.name, tz: time.isLocal() ? 'local' : ''}),
        'aria-current': current === e ? 'page' : null,
        onclick: (ev) => { ev.preventDefault(); select(e, new URLSearchParams()); }},
      h('span', {class: 'ep-name'}, e.name),
      e.description ? h('span', {class: 'ep-desc dim'}, e.description) : null)))));
  }

  function select(e, params) {
    current = e;
    last = null;
    drawList();
    drawDetail(params);
    saveURL(params);
  }

  function saveURL(params) {
    const out = {name: current ? current.name : '', tz: time.isLocal() ? 'local' : ''};
    for (const [k, v] of params) if (k.startsWith('p.') || k === 'sql' || k === 'lql') out[k] = v;
    state.write('endpoints', out);
  }

  function drawDetail(params) {
    if (!current) {
      clear(detail, h('p', {class: 'dim'}, eps.length ? 'Pick an endpoint to run it.' : ''));
      return;
    }
    const e = current;
    const inputs = e.parameters.map((name) => {
      const id = 'param-' + name;
      return {name, el: h('input', {id, name, class: 'mono', value: params.get('p.' + name) || '', autocomplete: 'off'}), id};
    });
    const lang = h('select', {'aria-label': 'Language of your query'}, h('option', {value: 'sql'}, 'SQL'), h('option', {value: 'lql'}, 'LQL'));
    const consumer = h('textarea', {id: 'consumer', class: 'mono', rows: '4', spellcheck: 'false',
      placeholder: 'select ... from <a CTE of the endpoint>   (Ctrl+Enter runs)'});
    if (params.get('lql')) { lang.value = 'lql'; consumer.value = params.get('lql'); } else consumer.value = params.get('sql') || '';
    consumer.addEventListener('keydown', (ev) => {
      if (ev.key === 'Enter' && (ev.ctrlKey || ev.metaKey)) { ev.preventDefault(); form.requestSubmit(); }
    });
    const runButton = h('button', {type: 'submit', class: 'primary'}, 'Run');
    const meta = h('p', {class: 'ep-meta', role: 'status', id: 'ep-meta'});
    const error = h('div', {class: 'lql-error', role: 'alert', hidden: true});
    const out = h('div', {class: 'ep-rows scroll-x'});
    const form = h('form', {class: 'ep-form', onsubmit: (ev) => { ev.preventDefault(); runIt(); }},
      inputs.length ? h('fieldset', null, h('legend', null, 'Parameters'),
        inputs.map((i) => h('div', {class: 'field'}, h('label', {for: i.id, class: 'mono'}, '@' + i.name), i.el))) : null,
      e.sandboxable ? h('fieldset', null, h('legend', null, 'Your query over the endpoint\'s CTEs (sandboxed)'),
        h('div', {class: 'field'}, lang), consumer) : null,
      h('div', {class: 'actions'}, runButton));

    clear(detail,
      h('h2', null, e.name),
      e.description ? h('p', null, e.description) : null,
      h('p', {class: 'badges'},
        h('span', {class: 'badge'}, e.language === 'lql' ? 'LQL' : 'SQL'),
        e.sandboxable ? h('span', {class: 'badge'}, 'sandboxable') : null,
        h('span', {class: 'badge'}, e.cache_duration_seconds > 0 ? 'cached ' + e.cache_duration_seconds + ' s' : 'not cached'),
        h('span', {class: 'badge'}, 'at most ' + formatCount(e.max_limit || 1000) + ' rows'),
        h('span', {class: 'badge mono dim'}, e.token)),
      e.query != null ? h('details', {class: 'sql', open: true}, h('summary', null, 'Query'), h('pre', {class: 'mono'}, e.query)) : null,
      form, error, meta, out);

    async function runIt() {
      const my = ++seq;
      const q = {};
      const urlParams = new URLSearchParams();
      for (const i of inputs) {
        if (i.el.value !== '') { q[i.name] = i.el.value; urlParams.set('p.' + i.name, i.el.value); }
      }
      const own = e.sandboxable ? consumer.value.trim() : '';
      if (own) { q[lang.value] = own; urlParams.set(lang.value, own); }
      saveURL(urlParams);
      runButton.disabled = true;
      error.hidden = true;
      meta.textContent = 'Running…';
      meta.dataset.state = 'running';
      try {
        const r = await api.call('api/endpoints/query/' + encodeURIComponent(e.token), {params: q});
        if (my !== seq) return;
        if (r.status !== 200 || !r.body || r.body.error) {
          clear(error, api.errorText(r));
          error.hidden = false;
          meta.textContent = '';
          meta.dataset.state = 'error';
          clear(out);
          return;
        }
        last = {rows: r.body.result || [], ms: r.ms, server: serverMillis(r.headers), cache: r.headers.get('X-Sediment-Cache') || ''};
        drawResult();
        meta.dataset.state = 'done';
      } catch (err) {
        clear(error, 'The server did not answer: ' + err.message);
        error.hidden = false;
        meta.textContent = '';
      } finally {
        runButton.disabled = false;
      }
    }

    function drawResult() {
      if (!last) return;
      const {rows, ms, server, cache} = last;
      const parts = [formatCount(rows.length) + (rows.length === 1 ? ' row' : ' rows'), formatMillis(ms) + ' in all'];
      if (server != null) parts.push(formatMillis(server) + ' on the server');
      if (cache) parts.push(cache === 'hit' ? 'answered from the cache' : cache === 'miss' ? 'cache miss: the query ran' : 'no cache');
      meta.textContent = parts.join(' · ');
      meta.dataset.rows = String(rows.length);
      meta.dataset.cache = cache;
      clear(out, resultTable(rows));
    }

    redraw = drawResult;
    if (inputs.length === 0 && !e.sandboxable) runIt();
  }

  drawList();
  drawDetail(p);
  return {onZone: () => { if (redraw) redraw(); }};
}

function serverMillis(headers) {
  const m = /(?:^|,)\s*query;dur=([\d.]+)/.exec(headers.get('Server-Timing') || '');
  return m ? Number(m[1]) : null;
}

/** resultTable draws rows as a table; columns are the union of the rows' keys. */
function resultTable(rows) {
  if (rows.length === 0) return h('p', {class: 'dim'}, 'No rows.');
  const cols = [];
  const seen = new Set();
  for (const r of rows.slice(0, 200)) for (const k of Object.keys(r)) if (!seen.has(k)) { seen.add(k); cols.push(k); }
  const shown = rows.slice(0, maxRenderedRows);
  return h('div', null,
    h('table', {class: 'grid ep-table'},
      h('thead', null, h('tr', null, cols.map((c) => h('th', {scope: 'col'}, c)))),
      h('tbody', null, shown.map((r) => h('tr', null, cols.map((c) => cellOf(c, r[c])))))),
    rows.length > shown.length ? h('p', {class: 'dim'}, 'Showing the first ' + formatCount(shown.length) + ' rows.') : null);
}

function cellOf(name, v) {
  if (v === null || v === undefined) return h('td', {class: 'dim'}, 'null');
  if (typeof v === 'object') return h('td', {class: 'mono json-cell'}, JSON.stringify(v));
  if (typeof v === 'number' && /timestamp/i.test(name) && Math.abs(v) > 1e14) {
    return h('td', {class: 'mono', title: String(v)}, time.format(v, 'us') + ' ' + time.zoneLabel(v));
  }
  return h('td', {class: typeof v === 'number' ? 'num' : ''}, String(v));
}
