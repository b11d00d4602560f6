// The search view: an LQL box, a time range, the histogram of the c: chart,
// the newest events in a table, an event's JSON, and live tail.

import {h, clear, formatCount, formatMillis} from './dom.js';
import * as api from './api.js';
import * as time from './time.js';
import * as state from './state.js';
import * as lql from './lql.js';
import {createTable} from './table.js';
import {createHistogram} from './histogram.js';
import {jsonView} from './jsonview.js';
import {startTail} from './tail.js';
import {sourceRef} from './sources.js';

/** pageSize is how many events one search (or "Load older") fetches. */
const pageSize = 100;
/** tailMax bounds the live tail's rows in memory and on screen. */
const tailMax = 1000;

/** periodFor picks the chart bucket for a span: at most 1,800 buckets. */
function periodFor(span) {
  if (span <= 30 * 60e6) return 'second';
  if (span <= 30 * 3600e6) return 'minute';
  if (span <= 75 * 86400e6) return 'hour';
  return 'day';
}

/** keysOf turns an LQL path (m.a.b) into event keys (metadata, a, b). */
function keysOf(path) {
  const parts = path.split('.');
  if (parts[0] === 'm') parts[0] = 'metadata';
  return parts;
}

/** valueAt reads keys from a plain event; undefined when absent. */
function valueAt(ev, keys) {
  let v = ev;
  for (const k of keys) {
    if (Array.isArray(v) && v.length === 1) v = v[0];
    if (v == null || typeof v !== 'object') return undefined;
    v = v[k];
  }
  return v;
}

export function render(root, ctx) {
  const sources = ctx.access.sources;
  const p = ctx.params;
  const st = {
    source: p.get('source') || (sources[0] ? sourceRef(sources[0], sources) : ''),
    q: p.get('q') || '',
    range: p.get('range') || (p.get('from') && p.get('to') ? '' : '1h'),
    from: p.get('from') || '',
    to: p.get('to') || '',
    cols: (p.get('cols') || '').split(',').filter(Boolean),
    open: p.get('open') || '',
  };

  let seq = 0;            // the latest search; older answers are ignored
  let result = null;      // {rows, count, from, to, complete}
  let live = null;        // the live tail's state while it runs
  let drawerFor = null;   // the row shown in the drawer

  // --- the controls
  const sourceSelect = h('select', {id: 'source', 'aria-label': 'Source', onchange: () => { st.source = sourceSelect.value; if (readInputs()) run(); }},
    sources.map((s) => h('option', {value: sourceRef(s, sources)}, s.name)));
  if (st.source && ![...sourceSelect.options].some((o) => o.value === st.source)) {
    sourceSelect.append(h('option', {value: st.source}, st.source));
  }
  sourceSelect.value = st.source;
  const input = h('input', {id: 'lql', type: 'search', class: 'lql mono', 'aria-label': 'LQL query', 'data-focus-slash': true,
    autocomplete: 'off', spellcheck: 'false', value: st.q,
    placeholder: 'm.response.status_code:500 -m.request.method:OPTIONS "timeout"   (press / to focus, Enter to run)'});
  const rangeSelect = h('select', {id: 'range', 'aria-label': 'Time range', onchange: () => {
    st.range = rangeSelect.value;
    if (st.range === '') {
      const r = resolveRange(time.ranges.find((x) => x.name === '1h'));
      st.from = time.iso(r.from); st.to = time.iso(r.to);
    }
    drawRangeInputs();
    if (st.range !== '') run();
    else fromInput.focus();
  }},
  time.ranges.map((r) => h('option', {value: r.name}, r.label)), h('option', {value: ''}, 'Between…'));
  const fromInput = h('input', {id: 'from', class: 'mono when', 'aria-label': 'From', placeholder: 'YYYY-MM-DD hh:mm:ss'});
  const toInput = h('input', {id: 'to', class: 'mono when', 'aria-label': 'To', placeholder: 'YYYY-MM-DD hh:mm:ss'});
  const zoneTag = h('span', {class: 'zone-tag'});
  const custom = h('span', {class: 'custom-range'}, fromInput, h('span', {class: 'dim'}, '–'), toInput, zoneTag);
  const runButton = h('button', {type: 'submit', class: 'primary'}, 'Run');
  const liveButton = h('button', {type: 'button', id: 'live', 'aria-pressed': 'false', onclick: () => (live ? stopLive() : startLive())}, 'Live tail');
  const form = h('form', {class: 'searchbar', role: 'search', onsubmit: (e) => { e.preventDefault(); readInputs() && run(); }},
    sourceSelect, input, rangeSelect, custom, runButton, liveButton);

  const errorBox = h('div', {class: 'lql-error', role: 'alert', hidden: true});
  const summary = h('p', {class: 'summary', role: 'status', id: 'summary'});
  const liveBar = h('div', {class: 'livebar', hidden: true});
  const histogram = createHistogram({onZoom: (a, b) => {
    st.range = ''; st.from = time.iso(a); st.to = time.iso(b);
    drawRangeInputs();
    run();
  }});
  const table = createTable({
    onOpen: (row) => openRow(row),
    onFilter: (keys, v, exclude) => addFilter(keys, v, exclude),
    onRemoveColumn: (id) => { st.cols.splice(Number(id.slice(1)), 1); run(); },
    empty: 'No events match in this range.',
  });
  const older = h('button', {type: 'button', class: 'older', hidden: true, onclick: () => loadOlder()}, 'Load older');
  const drawerBody = h('div', {class: 'drawer-body'});
  const drawerTitle = h('h2', {class: 'drawer-title mono'});
  const drawer = h('aside', {class: 'drawer', hidden: true, 'aria-label': 'Event', tabindex: '-1'},
    h('div', {class: 'drawer-head'}, drawerTitle, h('span', {class: 'spacer'}),
      h('button', {type: 'button', onclick: () => copyDrawer()}, 'Copy JSON'),
      h('button', {type: 'button', class: 'icon', 'aria-label': 'Close', title: 'Close (Esc)', onclick: () => closeDrawer()}, '×')),
    drawerBody);

  clear(root, h('section', {class: 'page search-page'}, form, errorBox,
    h('div', {class: 'results'}, h('div', {class: 'results-main'}, summary, liveBar, histogram.el, table.el, older), drawer)));

  const onKey = (e) => { if (e.key === 'Escape' && !drawer.hidden) closeDrawer(); };
  document.addEventListener('keydown', onKey);

  // --- state ⇄ controls
  function drawRangeInputs() {
    rangeSelect.value = st.range;
    custom.hidden = st.range !== '';
    if (st.range === '') {
      fromInput.value = time.format(time.parse(st.from), 's');
      toInput.value = time.format(time.parse(st.to), 's');
    }
    zoneTag.textContent = time.zoneLabel();
  }

  /** readInputs takes the typed query and range; false when a time does not parse. */
  function readInputs() {
    st.q = input.value.trim();
    if (st.range !== '') return true;
    const a = time.parse(fromInput.value);
    const b = time.parse(toInput.value);
    if (a == null || b == null || a > b) {
      showError(a == null || b == null ? 'Write times as YYYY-MM-DD hh:mm:ss (' + time.zoneLabel() + ').' : 'The range starts after it ends.');
      return false;
    }
    st.from = time.iso(a);
    st.to = time.iso(b + (/\.\d/.test(toInput.value) ? 0 : 999999));
    return true;
  }

  function saveURL({replace = false} = {}) {
    state.write('search', {
      source: st.source, q: st.q, range: st.range, from: st.range ? '' : st.from, to: st.range ? '' : st.to,
      cols: st.cols.join(','), open: st.open, tz: time.isLocal() ? 'local' : '',
    }, {replace});
  }

  function resolveRange(r) {
    if (r) { const to = time.nowMicros(); return {from: to - r.us, to}; }
    return {from: time.parse(st.from), to: time.parse(st.to)};
  }

  function currentRange() {
    return resolveRange(st.range ? time.ranges.find((x) => x.name === st.range) || time.ranges[2] : null);
  }

  // --- columns
  function columns(rows) {
    const cols = [
      {id: 'timestamp', label: 'Timestamp (' + time.zoneLabel() + ')', kind: 'time', keys: ['timestamp'], get: (r) => r.timestamp},
      {id: 'event_message', label: 'Message', kind: 'message', keys: ['event_message'], get: (r) => r.event_message},
    ];
    st.cols.forEach((path, i) => {
      const keys = keysOf(path);
      const alias = 'ui_col_' + i;
      cols.push({id: 'c' + i, label: path, kind: 'field', keys, removable: true,
        get: (r) => (alias in r ? unwrap(r[alias]) : valueAt(r, keys))});
    });
    // Columns of the query's own s: clauses.
    const known = new Set(['timestamp', 'id', 'event_message']);
    for (const r of rows.slice(0, 1)) {
      if (live) break;
      for (const k of Object.keys(r)) {
        if (known.has(k) || k.startsWith('ui_col_')) continue;
        cols.push({id: 's:' + k, label: k, title: 's: column ' + k, kind: 'field', keys: [], get: (row) => unwrap(row[k])});
      }
    }
    return cols;
  }

  function unwrap(v) {
    return Array.isArray(v) && v.length === 1 && v[0] !== null && typeof v[0] === 'object' ? v[0] : v;
  }

  // --- search
  function requestLQL(span) {
    let text = st.q;
    const written = lql.chartPeriod(text);
    const period = written || periodFor(span);
    if (!lql.hasChart(text)) text += ' c:count(*)';
    if (!written) text += ' c:group_by(t::' + period + ')';
    const own = new Set(lql.splitClauses(st.q).filter((w) => /^(s|select):/i.test(w)).map((w) => w.replace(/^(s|select):/i, '').split('@')[0]));
    st.cols.forEach((c, i) => { if (!own.has(c)) text += ' s:' + c + '@ui_col_' + i; });
    return {text: text.trim(), period};
  }

  async function run({replace = false} = {}) {
    if (!st.source) { summary.textContent = 'There is no source to search yet.'; return; }
    if (live) { restartLive(); saveURL({replace}); return; }
    const my = ++seq;
    const {from, to} = currentRange();
    const {text, period} = requestLQL(to - from);
    saveURL({replace});
    hideError();
    summary.textContent = 'Searching…';
    summary.dataset.state = 'running';
    runButton.disabled = true;
    const t0 = performance.now();
    let r;
    try {
      r = await api.call(api.sourcePath(st.source, 'search'), {params: {lql: text, from, to, limit: pageSize}});
    } catch (err) {
      if (my === seq) { showError('The server did not answer: ' + err.message); summary.textContent = ''; runButton.disabled = false; }
      return;
    }
    if (my !== seq) return;
    runButton.disabled = false;
    if (r.status === 401) { showError('This key may not search ' + st.source + ', or there is no such source.'); summary.textContent = ''; return; }
    if (r.status !== 200 || !r.body || r.body.error) { showLQLError(r); summary.textContent = ''; summary.dataset.state = 'error'; return; }
    const rows = r.body.result || [];
    const chart = (r.body.chart || []).map((b) => ({timestamp: Number(b.timestamp), count: Number(b.count)}));
    const aggregate = lql.chartAggregate(st.q) || 'count(*)';
    const isCount = aggregate.replace(/\s/g, '') === 'count(*)';
    const count = isCount ? chart.reduce((n, b) => n + b.count, 0) : null;
    result = {rows, count, from, to, complete: rows.length < pageSize};
    table.setColumns(columns(rows));
    table.setRows(rows);
    histogram.draw({buckets: chart, from, to, period: lql.periodMicros[period], label: isCount ? 'Events' : aggregate});
    drawSummary(performance.now() - t0);
    summary.dataset.state = 'done';
    // The time to the first frame that shows the answer, for measurements.
    requestAnimationFrame(() => setTimeout(() => {
      if (my !== seq) return;
      summary.dataset.renderMs = (performance.now() - t0).toFixed(1);
      performance.mark('sediment:search-rendered');
    }));
    if (st.open) reopen();
  }

  function drawSummary(ms) {
    if (!result) return;
    if (ms != null) result.ms = ms;
    ms = result.ms;
    const {rows, count, from, to} = result;
    const zone = time.zoneLabel(from);
    const parts = [];
    parts.push(count == null ? formatCount(rows.length) + ' events shown' : formatCount(count) + (count === 1 ? ' event' : ' events'));
    parts.push(time.format(from, 's') + ' – ' + time.format(to, 's') + ' ' + zone);
    if (count != null && count > rows.length) parts.push('showing the newest ' + formatCount(rows.length));
    if (ms != null) parts.push(formatMillis(ms));
    summary.textContent = parts.join(' · ');
    Object.assign(summary.dataset, {count: count == null ? '' : String(count), rows: String(rows.length), from: String(from), to: String(to)});
    older.hidden = result.complete || (count != null && rows.length >= count);
  }

  async function loadOlder() {
    if (!result || result.rows.length === 0) return;
    const my = seq;
    const rows = result.rows;
    const oldest = rows[rows.length - 1].timestamp;
    const seen = new Set(rows.filter((r) => r.timestamp === oldest).map((r) => r.id));
    const {text} = requestLQL(result.to - result.from);
    older.disabled = true;
    try {
      const r = await api.call(api.sourcePath(st.source, 'search'), {params: {
        lql: text, from: result.from, to: oldest, limit: Math.min(10000, pageSize + seen.size)}});
      if (my !== seq) return;
      if (r.status !== 200 || !r.body || r.body.error) { showLQLError(r); return; }
      const more = (r.body.result || []).filter((x) => !(x.timestamp === oldest && seen.has(x.id)));
      result.rows = rows.concat(more);
      result.complete = (r.body.result || []).length < pageSize + seen.size;
      table.setRows(result.rows, {keepScroll: true});
      drawSummary();
    } catch (err) {
      showError('The server did not answer: ' + err.message);
    } finally {
      older.disabled = false;
    }
  }

  // --- errors
  function hideError() { errorBox.hidden = true; clear(errorBox); }

  function showError(msg) {
    clear(errorBox, msg);
    errorBox.hidden = false;
  }

  function showLQLError(r) {
    const msg = api.errorText(r);
    const b = r.body || {};
    if (typeof b.clause === 'string' && typeof b.offset === 'number' && b.offset < st.q.length) {
      const q = st.q;
      const end = Math.min(q.length, b.offset + Math.max(1, b.clause.length));
      clear(errorBox,
        h('p', null, 'The clause ', h('code', {class: 'clause'}, b.clause), ' does not parse: ', msg),
        h('p', {class: 'mono echo'}, q.slice(0, b.offset), h('mark', null, q.slice(b.offset, end)), q.slice(end)));
      errorBox.hidden = false;
      input.setAttribute('aria-invalid', 'true');
      input.focus();
      input.setSelectionRange(b.offset, end);
      return;
    }
    showError(r.status === 200 ? 'The query failed: ' + msg : msg);
  }

  // --- filters and columns from clicks
  function addFilter(keys, v, exclude) {
    st.q = lql.addClause(input.value.trim(), lql.clause(keys, v, exclude));
    input.value = st.q;
    input.removeAttribute('aria-invalid');
    run();
  }

  function addColumn(path) {
    if (!st.cols.includes(path)) st.cols.push(path);
    run();
  }

  // --- the event drawer
  async function openRow(row) {
    drawerFor = row;
    drawer.hidden = false;
    drawerTitle.textContent = time.format(row.timestamp, 'us') + ' ' + time.zoneLabel(row.timestamp);
    const handlers = {onFilter: (k, v, ex) => addFilter(k, v, ex), onColumn: (path) => addColumn(path)};
    if (live) {
      clear(drawerBody, jsonView(row, handlers));
      drawer.focus();
      return;
    }
    st.open = row.timestamp + ':' + row.id;
    saveURL({replace: true});
    clear(drawerBody, h('p', {class: 'dim'}, 'Loading the event…'));
    drawer.focus();
    const r = await api.call(api.sourcePath(st.source, 'event'), {params: {id: row.id, timestamp: row.timestamp}});
    if (drawerFor !== row) return;
    if (r.status !== 200 || !r.body || r.body.error) { clear(drawerBody, h('p', {class: 'error'}, api.errorText(r))); return; }
    const ev = (r.body.result || [])[0];
    if (!ev) { clear(drawerBody, h('p', {class: 'error'}, 'This event is no longer stored.')); return; }
    clear(drawerBody, jsonView(ev, handlers),
      r.body.omitted_fields ? h('p', {class: 'dim'}, 'Not shown (names LQL cannot select): ' + r.body.omitted_fields.join(', ')) : null);
  }

  function reopen() {
    const [ts, id] = [st.open.slice(0, st.open.indexOf(':')), st.open.slice(st.open.indexOf(':') + 1)];
    const i = result.rows.findIndex((r) => String(r.timestamp) === ts && r.id === id);
    const row = i >= 0 ? result.rows[i] : {timestamp: Number(ts), id};
    if (i >= 0) table.select(i);
    openRow(row);
  }

  function closeDrawer() {
    drawer.hidden = true;
    drawerFor = null;
    if (st.open) { st.open = ''; saveURL({replace: true}); }
    table.refresh();
  }

  async function copyDrawer() {
    const text = drawerBody.querySelector('.json')?.innerText || '';
    try { await navigator.clipboard.writeText(text); } catch { /* clipboard refused */ }
  }

  // --- live tail
  function startLive() {
    closeDrawer();
    live = {stream: null, rows: [], pending: [], received: 0, serverDropped: 0, pausedDropped: 0, paused: false, status: 'connecting…', frame: 0};
    liveButton.setAttribute('aria-pressed', 'true');
    liveButton.textContent = 'Stop live tail';
    histogram.el.hidden = true;
    older.hidden = true;
    summary.hidden = true;
    liveBar.hidden = false;
    table.setEmpty('Waiting for new events that match…');
    table.setColumns(columns([]));
    table.setRows([]);
    openStream();
  }

  function openStream() {
    const l = live;
    st.q = input.value.trim();
    l.stream = startTail(st.source, st.q, {
      onEvents: (list) => {
        if (live !== l) return;
        l.received += list.length;
        for (const ev of list) l.pending.push(ev);
        if (l.pending.length > tailMax) {
          const cut = l.pending.length - tailMax;
          if (l.paused) l.pausedDropped += cut;
          l.pending.splice(0, cut);
        }
        if (!l.paused) flushLive();
        drawLiveBar();
      },
      onDropped: (n) => { if (live === l) { l.serverDropped += n; drawLiveBar(); } },
      onStatus: (text, ok) => { if (live === l) { l.status = ok ? 'connected' : text; l.ok = ok; drawLiveBar(); } },
    });
    drawLiveBar();
  }

  function flushLive() {
    const l = live;
    if (l.frame) return;
    l.frame = requestAnimationFrame(() => {
      l.frame = 0;
      if (live !== l || l.paused || l.pending.length === 0) return;
      const fresh = l.pending.reverse();
      l.pending = [];
      l.rows = fresh.concat(l.rows);
      if (l.rows.length > tailMax) l.rows.length = tailMax;
      table.setRows(l.rows, {keepScroll: true});
      drawLiveBar();
    });
  }

  function restartLive() {
    if (!live) return;
    live.stream.stop();
    Object.assign(live, {rows: [], pending: [], received: 0, serverDropped: 0, pausedDropped: 0, status: 'connecting…'});
    table.setColumns(columns([]));
    table.setRows([]);
    openStream();
  }

  function stopLive() {
    if (!live) return;
    live.stream.stop();
    cancelAnimationFrame(live.frame);
    live = null;
    liveButton.setAttribute('aria-pressed', 'false');
    liveButton.textContent = 'Live tail';
    histogram.el.hidden = false;
    summary.hidden = false;
    liveBar.hidden = true;
    table.setEmpty('No events match in this range.');
    run();
  }

  function drawLiveBar() {
    const l = live;
    if (!l) return;
    const dropped = l.serverDropped + l.pausedDropped;
    clear(liveBar,
      h('span', {class: 'live-dot' + (l.ok ? ' on' : '')}, ''),
      h('span', {id: 'live-status', dataset: {status: l.ok ? 'connected' : 'off'}}, l.ok ? 'Live' : l.status),
      h('span', null, formatCount(l.received) + ' received'),
      h('span', {id: 'live-dropped', class: dropped ? 'warn' : '', title: 'Events the server could not deliver in time, and events that arrived while paused beyond ' + formatCount(tailMax)},
        formatCount(dropped) + ' dropped' + (l.pausedDropped ? ' (' + formatCount(l.pausedDropped) + ' while paused)' : '')),
      h('span', {class: 'dim'}, 'showing the newest ' + formatCount(Math.min(tailMax, l.rows.length)) + (l.paused && l.pending.length ? ', ' + formatCount(l.pending.length) + ' waiting' : '')),
      h('button', {type: 'button', id: 'live-pause', 'aria-pressed': l.paused ? 'true' : 'false', onclick: () => {
        l.paused = !l.paused;
        if (!l.paused) flushLive();
        drawLiveBar();
      }}, l.paused ? 'Resume' : 'Pause'));
  }

  // --- start
  drawRangeInputs();
  table.setColumns(columns([]));
  run({replace: true});

  return {
    dispose() {
      seq++;
      if (live) { live.stream.stop(); cancelAnimationFrame(live.frame); live = null; }
      document.removeEventListener('keydown', onKey);
    },
    onZone() {
      drawRangeInputs();
      table.setColumns(columns(result && !live ? result.rows : []));
      histogram.redraw();
      drawSummary();
      if (drawerFor) openRow(drawerFor);
    },
  };
}
