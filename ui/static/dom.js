// Small DOM helpers shared by the views.

/**
 * h builds an element: h('button', {class: 'x', onclick: fn}, 'text', child).
 * Attributes starting with "on" become listeners; null and false are skipped;
 * children may be strings, nodes, arrays or null.
 */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  if (attrs) {
    for (const [k, v] of Object.entries(attrs)) {
      if (v == null || v === false) continue;
      if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
      else if (k === 'dataset') Object.assign(el.dataset, v);
      else if (k === 'value' && 'value' in el) el.value = v;
      else el.setAttribute(k, v === true ? '' : String(v));
    }
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c == null || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.append(c instanceof Node ? c : String(c));
  }
}

/** clear removes every child of el and appends the given children. */
export function clear(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

/** formatCount writes n with thousands separators. */
export function formatCount(n) {
  return Number(n).toLocaleString('en-US');
}

/** formatBytes writes a size in B, KiB, MiB or GiB. */
export function formatBytes(n) {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  let v = Number(n);
  while (v >= 1024 && i < units.length - 1) { v /= 1024; i++; }
  return (i === 0 ? String(v) : v.toFixed(v < 10 ? 2 : 1)) + ' ' + units[i];
}

/** formatMillis writes a duration in milliseconds. */
export function formatMillis(ms) {
  if (ms < 10) return ms.toFixed(2) + ' ms';
  if (ms < 1000) return Math.round(ms) + ' ms';
  return (ms / 1000).toFixed(2) + ' s';
}

/** debounce calls fn once, wait ms after the last call. */
export function debounce(fn, wait) {
  let t = 0;
  return (...args) => { clearTimeout(t); t = setTimeout(() => fn(...args), wait); };
}
