// An event as formatted JSON. Each value is a button that adds a filter on
// it (path:value); "−" adds the negation and "+ column" shows the field in
// the results table.

import {h} from './dom.js';
import * as time from './time.js';
import {filterable, lqlPath} from './lql.js';

/**
 * jsonView renders value. Handlers: onFilter(keys, value, exclude),
 * onColumn(lqlPath) (optional).
 */
export function jsonView(value, {onFilter, onColumn}) {
  return h('div', {class: 'json mono'}, node(value, [], {onFilter, onColumn}));
}

function node(v, keys, hd) {
  if (Array.isArray(v)) {
    if (v.length === 0) return h('span', {class: 'punct'}, '[]');
    return h('span', null, h('span', {class: 'punct'}, '['),
      h('ul', null, v.map((x, i) => h('li', null, node(x, [...keys, i], hd), i < v.length - 1 ? h('span', {class: 'punct'}, ',') : null))),
      h('span', {class: 'punct'}, ']'));
  }
  if (v !== null && typeof v === 'object') {
    const entries = Object.entries(v).sort(([a], [b]) => order(a) - order(b) || a.localeCompare(b));
    if (entries.length === 0) return h('span', {class: 'punct'}, '{}');
    return h('span', null, h('span', {class: 'punct'}, '{'),
      h('ul', null, entries.map(([k, x], i) => h('li', null,
        h('span', {class: 'key'}, JSON.stringify(k)), h('span', {class: 'punct'}, ': '),
        node(x, [...keys, k], hd), i < entries.length - 1 ? h('span', {class: 'punct'}, ',') : null))),
      h('span', {class: 'punct'}, '}'));
  }
  return scalar(v, keys, hd);
}

// The base fields first, the rest by name.
function order(k) {
  return k === 'timestamp' ? 0 : k === 'id' ? 1 : k === 'event_message' ? 2 : 3;
}

function scalar(v, keys, hd) {
  const text = JSON.stringify(v);
  const cls = 'v-' + (v === null ? 'null' : typeof v);
  const note = keys.length === 1 && keys[0] === 'timestamp' && typeof v === 'number' ?
    h('span', {class: 'note'}, ' // ' + time.format(v, 'us') + ' ' + time.zoneLabel(v)) : null;
  if (!filterable(keys, v)) return h('span', {class: cls}, text, note);
  const {path} = lqlPath(keys);
  return h('span', {class: 'jv'},
    h('button', {type: 'button', class: 'val ' + cls, title: `Add ${path}:… to the query`,
      onclick: () => hd.onFilter(keys, v, false)}, text),
    h('button', {type: 'button', class: 'icon exclude', title: `Exclude -${path}:…`, 'aria-label': `Exclude this value of ${path}`,
      onclick: () => hd.onFilter(keys, v, true)}, '−'),
    hd.onColumn ? h('button', {type: 'button', class: 'icon addcol', title: `Show ${path} as a column`, 'aria-label': `Show ${path} as a column`,
      onclick: () => hd.onColumn(path)}, '+ column') : null,
    note);
}
