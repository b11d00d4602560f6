// The histogram of a search: the chart the search API returns for the c:
// clause, its buckets gathered into at most a bar every few pixels. Drag
// across it (or click a bar) to zoom the time range.

import {h, clear, formatCount} from './dom.js';
import * as time from './time.js';

const svgNS = 'http://www.w3.org/2000/svg';

function s(tag, attrs, ...children) {
  const el = document.createElementNS(svgNS, tag);
  for (const [k, v] of Object.entries(attrs || {})) el.setAttribute(k, String(v));
  for (const c of children) el.append(c);
  return el;
}

/** niceSteps are the bar widths, in µs, bars are gathered into. */
const niceSteps = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400,
  2 * 86400, 7 * 86400, 14 * 86400, 30 * 86400].map((sec) => sec * 1e6);

/**
 * bins gathers buckets ({timestamp µs, count}) of width period into bars of
 * a width from niceSteps, at most maxBars over [from, to]. Every bucket
 * lands in exactly one bar, so the bars add up to the buckets.
 */
export function bins(buckets, from, to, period, maxBars) {
  const span = Math.max(to - from, period);
  let width = niceSteps.find((w) => w >= period && span / w <= maxBars) || Math.ceil(span / maxBars / period) * period;
  width = Math.max(width, period);
  const start = Math.floor(from / width) * width;
  const n = Math.max(1, Math.ceil((to + 1 - start) / width));
  const bars = Array.from({length: n}, (_, i) => ({start: start + i * width, end: start + (i + 1) * width - 1, count: 0}));
  for (const b of buckets) {
    const i = Math.min(n - 1, Math.max(0, Math.floor((b.timestamp - start) / width)));
    bars[i].count += b.count;
  }
  return {bars, width};
}

/** createHistogram returns {el, draw(data), clear()}; onZoom(fromµs, toµs). */
export function createHistogram({onZoom}) {
  const el = h('div', {class: 'histogram', role: 'img', 'aria-label': 'Events over time'});
  let data = null;
  let drag = null;
  let layout = null;

  new ResizeObserver(() => { if (data) draw(data); }).observe(el);

  function draw(d) {
    data = d;
    const width = Math.max(200, el.clientWidth || 800);
    const height = el.clientHeight || 120;
    const pad = {l: 8, r: 8, t: 18, b: 20};
    const plotW = width - pad.l - pad.r;
    const plotH = height - pad.t - pad.b;
    const {bars, width: barUs} = bins(d.buckets, d.from, d.to, d.period, Math.min(150, Math.floor(plotW / 5)));
    const lo = bars[0].start;
    const hi = bars[bars.length - 1].end + 1;
    const x = (t) => pad.l + (t - lo) / (hi - lo) * plotW;
    const max = Math.max(1, ...bars.map((b) => b.count));
    const svg = s('svg', {width, height, viewBox: `0 0 ${width} ${height}`, class: 'hist-svg'});
    svg.append(s('line', {x1: pad.l, x2: width - pad.r, y1: pad.t + plotH + 0.5, y2: pad.t + plotH + 0.5, class: 'axis'}));
    const bw = Math.max(1, plotW / bars.length - 1);
    const g = s('g', {class: 'bars'});
    for (const b of bars) {
      const bh = b.count === 0 ? 0 : Math.max(1, b.count / max * plotH);
      const r = s('rect', {x: x(b.start) + 0.5, y: pad.t + plotH - bh, width: bw, height: bh, class: 'bar',
        'data-count': b.count, 'data-start': b.start, 'data-end': b.end});
      r.append(s('title', {}, `${time.format(b.start, 's')} – ${time.format(b.end, 's')} ${time.zoneLabel(b.start)}: ${formatCount(b.count)}`));
      g.append(r);
    }
    svg.append(g);
    // Axis labels: about one per 110 px, at bar starts.
    const every = Math.max(1, Math.ceil(bars.length / Math.max(2, Math.floor(plotW / 110))));
    const multiDay = hi - lo > 36 * 3600e6;
    for (let i = 0; i < bars.length; i += every) {
      const t = bars[i].start;
      const label = multiDay && barUs >= 3600e6 ? time.formatDay(t) + ' ' + time.formatShort(t) : time.formatShort(t, barUs < 60e6);
      svg.append(s('text', {x: x(t), y: height - 5, class: 'tick'}, label));
    }
    svg.append(s('text', {x: width - pad.r, y: 12, class: 'tick end'}, 'max ' + formatCount(max) + ' per ' + stepName(barUs)));
    svg.append(s('text', {x: pad.l, y: 12, class: 'tick'}, d.label + ' · ' + time.zoneLabel(lo)));
    const sel = s('rect', {class: 'selection', x: 0, y: pad.t, width: 0, height: plotH, visibility: 'hidden'});
    svg.append(sel);
    layout = {x, lo, hi, pad, plotW, sel, bars, barUs};
    clear(el, svg);
    el.dataset.total = String(bars.reduce((n, b) => n + b.count, 0));
    el.setAttribute('aria-label', `${d.label} over time: ${formatCount(Number(el.dataset.total))} in ${bars.length} bars of ${stepName(barUs)}`);
  }

  function timeAt(px) {
    const {lo, hi, pad, plotW} = layout;
    const f = Math.min(1, Math.max(0, (px - pad.l) / plotW));
    return Math.round(lo + f * (hi - lo));
  }

  function localX(e) { return e.clientX - el.getBoundingClientRect().left; }

  el.addEventListener('pointerdown', (e) => {
    if (!layout || e.button !== 0) return;
    drag = {x0: localX(e), x1: localX(e)};
    el.setPointerCapture(e.pointerId);
  });
  el.addEventListener('pointermove', (e) => {
    if (!drag) return;
    drag.x1 = localX(e);
    const a = Math.min(drag.x0, drag.x1);
    const w = Math.abs(drag.x1 - drag.x0);
    layout.sel.setAttribute('x', a);
    layout.sel.setAttribute('width', w);
    layout.sel.setAttribute('visibility', w > 2 ? 'visible' : 'hidden');
  });
  el.addEventListener('pointerup', (e) => {
    if (!drag) return;
    const d = drag;
    drag = null;
    layout.sel.setAttribute('visibility', 'hidden');
    if (Math.abs(d.x1 - d.x0) > 3) {
      const a = timeAt(Math.min(d.x0, d.x1));
      const b = timeAt(Math.max(d.x0, d.x1));
      if (b > a) onZoom(a, b);
      return;
    }
    const bar = e.target instanceof Element ? e.target.closest('rect.bar') : null;
    if (bar) onZoom(Number(bar.dataset.start), Number(bar.dataset.end));
  });
  el.addEventListener('pointercancel', () => { drag = null; layout?.sel.setAttribute('visibility', 'hidden'); });

  return {
    el,
    draw,
    redraw() { if (data) draw(data); },
    clear() { data = null; layout = null; clear(el); el.dataset.total = ''; },
  };
}

function stepName(us) {
  const sec = us / 1e6;
  if (sec % 86400 === 0) return sec === 86400 ? 'day' : sec / 86400 + ' days';
  if (sec % 3600 === 0) return sec === 3600 ? 'hour' : sec / 3600 + ' hours';
  if (sec % 60 === 0) return sec === 60 ? 'minute' : sec / 60 + ' minutes';
  return sec === 1 ? 'second' : sec + ' seconds';
}
