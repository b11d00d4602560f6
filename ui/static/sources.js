// The sources view: every source with its event count, newest event and
// size on disk (from GET /api/access). Picking one opens the search.

import {h, clear, formatCount, formatBytes} from './dom.js';
import * as time from './time.js';
import * as state from './state.js';

/** sourceRef is how the URL names a source: its name when unique, else its token. */
export function sourceRef(src, all) {
  return all.filter((s) => s.name === src.name).length > 1 ? src.token : src.name;
}

export function render(root, ctx) {
  const body = h('tbody');
  const status = h('p', {class: 'status', role: 'status'});
  const table = h('table', {class: 'grid sources'},
    h('thead', null, h('tr', null,
      h('th', {scope: 'col'}, 'Source'),
      h('th', {scope: 'col', class: 'num'}, 'Events'),
      h('th', {scope: 'col', class: 'zone-head'}, ''),
      h('th', {scope: 'col', class: 'num'}, 'On disk'),
      h('th', {scope: 'col'}, 'Token'))),
    body);
  const refresh = h('button', {type: 'button', onclick: () => load()}, 'Refresh');
  clear(root, h('section', {class: 'page'},
    h('div', {class: 'toolbar'}, h('h1', null, 'Sources'), h('span', {class: 'spacer'}), refresh),
    status, h('div', {class: 'scroll-x'}, table)));

  function draw() {
    const list = [...ctx.access.sources].sort((a, b) => a.name.localeCompare(b.name));
    table.querySelector('.zone-head').textContent = 'Newest event (' + time.zoneLabel() + ')';
    clear(body, list.map((src) => {
      const link = state.href('search', {source: sourceRef(src, list), tz: time.isLocal() ? 'local' : ''});
      return h('tr', {dataset: {token: src.token}},
        h('td', null, h('a', {href: link}, src.name)),
        h('td', {class: 'num'}, formatCount(src.event_count)),
        h('td', {class: 'mono'}, src.newest_event_timestamp == null ? '—' : time.format(src.newest_event_timestamp)),
        h('td', {class: 'num'}, formatBytes(src.storage_bytes),
          src.unflushed_event_count > 0 ? h('span', {class: 'dim', title: 'Events in memory and in the write-ahead log, searchable already, not yet written to segment files'},
            ' + ' + formatCount(src.unflushed_event_count) + ' in the log') : null),
        h('td', {class: 'mono dim'}, src.token));
    }));
    status.textContent = list.length === 0 ? 'No sources yet.' :
      formatCount(list.length) + ' sources · ' + formatCount(list.reduce((n, s) => n + s.event_count, 0)) + ' events';
  }

  async function load() {
    refresh.disabled = true;
    try {
      const r = await ctx.refreshAccess();
      if (r.status === 401) { ctx.signOut('The key is no longer accepted.'); return; }
      draw();
      requestAnimationFrame(() => setTimeout(() => performance.mark('sediment:sources-rendered')));
    } catch (err) {
      status.textContent = 'Could not load the sources: ' + err.message;
    } finally {
      refresh.disabled = false;
    }
  }

  draw();
  load();
  return {onZone: draw};
}
