// The results table. Rows have one fixed height and only those in view (and
// a few around them) are in the DOM, so a thousand rows scroll as smoothly
// as ten.

import {h, clear} from './dom.js';
import * as time from './time.js';
import {filterable} from './lql.js';

const overscan = 8;

/**
 * createTable returns {el, setColumns, setRows, rows, select, refresh}.
 * Columns: {id, label, kind: 'time'|'message'|'field', keys (the path in a
 * plain event, for filters), get(row), removable}.
 * Handlers: onOpen(row, index), onFilter(keys, value, exclude), onRemoveColumn(id).
 */
export function createTable({onOpen, onFilter, onRemoveColumn, empty = 'No events.'}) {
  let columns = [];
  let rows = [];
  let selected = -1;
  let rowHeight = 30;
  let frame = 0;
  let drawn = new Map(); // row index → its element, for the rows on screen

  const head = h('div', {class: 'rhead', role: 'row'});
  const win = h('div', {class: 'rwindow', role: 'rowgroup'});
  const spacer = h('div', {class: 'rspacer'}, win);
  const placeholder = h('p', {class: 'rempty'}, empty);
  const scroller = h('div', {class: 'rscroll'}, head, spacer, placeholder);
  const el = h('div', {class: 'rtable', role: 'table', 'aria-label': 'Events', 'aria-rowcount': '0'}, scroller);
  el.renderStats = {count: 0, total: 0, max: 0};

  scroller.addEventListener('scroll', schedule, {passive: true});
  new ResizeObserver(schedule).observe(scroller);

  scroller.addEventListener('click', (e) => {
    const t = e.target instanceof Element ? e.target : null;
    if (!t) return;
    const act = t.closest('[data-act]');
    if (act) {
      e.stopPropagation();
      const rowEl = act.closest('[data-index]');
      const row = rowEl ? rows[Number(rowEl.dataset.index)] : null;
      const col = columns.find((c) => c.id === act.dataset.col);
      if (act.dataset.act === 'remove') { onRemoveColumn?.(act.dataset.col); return; }
      if (row && col) onFilter?.(col.keys, col.get(row), act.dataset.act === 'exclude');
      return;
    }
    const rowEl = t.closest('[data-index]');
    if (rowEl) open(Number(rowEl.dataset.index));
  });
  scroller.addEventListener('keydown', (e) => {
    const rowEl = e.target instanceof Element ? e.target.closest('[data-index]') : null;
    if (!rowEl || e.target !== rowEl) return;
    const i = Number(rowEl.dataset.index);
    if (e.key === 'Enter') { e.preventDefault(); open(i); }
    if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      e.preventDefault();
      focusRow(Math.max(0, Math.min(rows.length - 1, i + (e.key === 'ArrowDown' ? 1 : -1))));
    }
  });

  function open(i) {
    selected = i;
    render();
    onOpen?.(rows[i], i);
  }

  function focusRow(i) {
    const top = i * rowHeight;
    const view = scroller.clientHeight - head.offsetHeight;
    if (top < scroller.scrollTop) scroller.scrollTop = top;
    else if (top + rowHeight > scroller.scrollTop + view) scroller.scrollTop = top + rowHeight - view;
    render();
    win.querySelector(`[data-index="${i}"]`)?.focus();
  }

  function schedule() {
    if (!frame) frame = requestAnimationFrame(() => { frame = 0; render(); });
  }

  function template() {
    return columns.map((c) => c.kind === 'time' ? 'var(--col-time)' : c.kind === 'message' ? 'minmax(var(--msg-min), 1fr)' : 'minmax(9em, 14em)').join(' ');
  }

  function drawHead() {
    el.style.setProperty('--cols', template());
    // Rows are as wide as the view, or as the columns' minimum widths.
    const fields = columns.filter((c) => c.kind === 'field').length;
    el.style.setProperty('--row-min', `calc(var(--col-time) + var(--msg-min) + ${fields * 9}em)`);
    clear(head, columns.map((c) => h('div', {role: 'columnheader', class: 'cell ' + c.kind, title: c.title || c.label},
      h('span', null, c.label),
      c.removable ? h('button', {type: 'button', class: 'icon', dataset: {act: 'remove', col: c.id}, 'aria-label': 'Remove column ' + c.label, title: 'Remove column'}, '×') : null)));
  }

  function cell(c, row) {
    const v = c.get(row);
    if (c.kind === 'time') return h('div', {role: 'cell', class: 'cell time mono'}, time.format(v));
    if (c.kind === 'message') return h('div', {role: 'cell', class: 'cell message'}, v == null ? '' : String(v));
    if (v === undefined || v === null) return h('div', {role: 'cell', class: 'cell field dim'}, '—');
    if (typeof v === 'object' || !filterable(c.keys, v)) return h('div', {role: 'cell', class: 'cell field mono'}, typeof v === 'object' ? JSON.stringify(v) : String(v));
    return h('div', {role: 'cell', class: 'cell field'},
      h('button', {type: 'button', class: 'val', dataset: {act: 'include', col: c.id}, title: 'Filter on this value'}, String(v)),
      h('button', {type: 'button', class: 'icon exclude', dataset: {act: 'exclude', col: c.id}, 'aria-label': 'Exclude this value', title: 'Exclude this value'}, '−'));
  }

  function render() {
    const t0 = performance.now();
    renderRows();
    // What drawing costs, for measurements (ui/perf_test.go reads it).
    const ms = performance.now() - t0;
    const st = el.renderStats;
    st.count++; st.total += ms; st.max = Math.max(st.max, ms);
  }

  function renderRows() {
    spacer.style.height = rows.length * rowHeight + 'px';
    placeholder.hidden = rows.length > 0;
    el.setAttribute('aria-rowcount', String(rows.length));
    const top = Math.max(0, scroller.scrollTop - head.offsetHeight);
    const first = Math.max(0, Math.floor(top / rowHeight) - overscan);
    const last = Math.min(rows.length, Math.ceil((top + scroller.clientHeight) / rowHeight) + overscan);
    win.style.transform = `translateY(${first * rowHeight}px)`;
    // Rows still in view keep their elements: a scroll builds only the
    // rows it brings in.
    const next = new Map();
    const out = [];
    for (let i = first; i < last; i++) {
      const row = rows[i];
      let el = drawn.get(i);
      if (!el || el.sedimentRow !== row || el.sedimentCols !== columns) {
        el = h('div', {role: 'row', class: 'rrow', tabindex: '0', 'aria-rowindex': String(i + 1), dataset: {index: String(i), id: row.id ?? ''}},
          columns.map((c) => cell(c, row)));
        el.sedimentRow = row;
        el.sedimentCols = columns;
      }
      el.classList.toggle('selected', i === selected);
      next.set(i, el);
      out.push(el);
    }
    drawn = next;
    win.replaceChildren(...out);
  }

  return {
    el,
    setColumns(cols) { columns = cols; drawHead(); render(); },
    setRows(list, {keepScroll = false} = {}) {
      rows = list;
      selected = -1;
      if (!keepScroll) scroller.scrollTop = 0;
      render();
    },
    get rows() { return rows; },
    select(i) { selected = i; render(); },
    refresh: render,
    setEmpty(text) { placeholder.textContent = text; },
  };
}
