// Times: the API speaks unix microseconds; the page shows UTC (labelled) or,
// when the user asks, the browser's time zone.

let local = false;

/** setLocal chooses UTC (false) or the browser's zone (true). */
export function setLocal(v) { local = !!v; }
export function isLocal() { return local; }

/** zoneLabel names the zone times are shown in: "UTC" or "local, UTC+02:00". */
export function zoneLabel(atMicros) {
  if (!local) return 'UTC';
  const d = atMicros ? new Date(atMicros / 1000) : new Date();
  return 'local, UTC' + offsetText(-d.getTimezoneOffset());
}

function offsetText(min) {
  const sign = min < 0 ? '−' : '+';
  const a = Math.abs(min);
  return sign + pad(Math.floor(a / 60)) + ':' + pad(a % 60);
}

function pad(n, w = 2) { return String(n).padStart(w, '0'); }

/** parts splits a µs timestamp into calendar fields in the shown zone. */
function parts(us) {
  const ms = Math.floor(us / 1000);
  const d = new Date(ms);
  const frac = ((us % 1e6) + 1e6) % 1e6;
  if (local) {
    return {y: d.getFullYear(), mo: d.getMonth() + 1, d: d.getDate(), h: d.getHours(), mi: d.getMinutes(), s: d.getSeconds(), frac};
  }
  return {y: d.getUTCFullYear(), mo: d.getUTCMonth() + 1, d: d.getUTCDate(), h: d.getUTCHours(), mi: d.getUTCMinutes(), s: d.getUTCSeconds(), frac};
}

/**
 * format writes a µs timestamp as "2025-07-10 12:00:05.123" in the shown zone;
 * precision is 'us', 'ms' (default), 's' or 'min'.
 */
export function format(us, precision = 'ms') {
  if (us == null || !Number.isFinite(Number(us))) return '';
  const p = parts(Number(us));
  let out = p.y + '-' + pad(p.mo) + '-' + pad(p.d) + ' ' + pad(p.h) + ':' + pad(p.mi);
  if (precision === 'min') return out;
  out += ':' + pad(p.s);
  if (precision === 'ms') out += '.' + pad(Math.floor(p.frac / 1000), 3);
  if (precision === 'us') out += '.' + pad(p.frac, 6);
  return out;
}

/** formatShort writes the time of day only (axis labels). */
export function formatShort(us, withSeconds) {
  const p = parts(us);
  return pad(p.h) + ':' + pad(p.mi) + (withSeconds ? ':' + pad(p.s) : '');
}

/** formatDay writes the date only. */
export function formatDay(us) {
  const p = parts(us);
  return p.y + '-' + pad(p.mo) + '-' + pad(p.d);
}

/** iso writes a µs timestamp as ISO-8601 UTC with microseconds. */
export function iso(us) {
  const was = local;
  local = false;
  const s = format(us, 'us');
  local = was;
  return s.replace(' ', 'T') + 'Z';
}

/**
 * parse reads "2025-07-10 12:00[:05[.123456]]" (or with a T, or a date alone)
 * in the shown zone, or a full ISO-8601 time with Z or an offset, or unix
 * microseconds. It returns µs or null.
 */
export function parse(text) {
  const s = String(text).trim();
  if (s === '') return null;
  if (/^-?\d{13,17}$/.test(s)) return Number(s);
  const m = /^(\d{4})-(\d{2})-(\d{2})(?:[ T](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,6}))?)?)?\s*(Z|[+-]\d{2}:?\d{2})?$/i.exec(s);
  if (!m) return null;
  const [, y, mo, d, h = '0', mi = '0', sec = '0', frac = '', zone] = m;
  const fracUs = frac ? Number(frac.padEnd(6, '0')) : 0;
  let ms;
  if (zone) {
    const off = zone.toUpperCase() === 'Z' ? 0 : offsetMinutes(zone);
    ms = Date.UTC(+y, +mo - 1, +d, +h, +mi, +sec) - off * 60000;
  } else if (local) {
    ms = new Date(+y, +mo - 1, +d, +h, +mi, +sec).getTime();
  } else {
    ms = Date.UTC(+y, +mo - 1, +d, +h, +mi, +sec);
  }
  if (!Number.isFinite(ms)) return null;
  return ms * 1000 + fracUs;
}

function offsetMinutes(z) {
  const m = /^([+-])(\d{2}):?(\d{2})$/.exec(z);
  const v = Number(m[2]) * 60 + Number(m[3]);
  return m[1] === '-' ? -v : v;
}

/** Relative ranges the picker offers, by their URL name. */
export const ranges = [
  {name: '5m', label: 'Last 5 minutes', us: 5 * 60e6},
  {name: '15m', label: 'Last 15 minutes', us: 15 * 60e6},
  {name: '1h', label: 'Last hour', us: 3600e6},
  {name: '24h', label: 'Last 24 hours', us: 24 * 3600e6},
  {name: '7d', label: 'Last 7 days', us: 7 * 24 * 3600e6},
];

/** nowMicros is the browser's clock in µs. */
export function nowMicros() { return Date.now() * 1000; }
