// Building LQL from what the user clicks: a field path and a value become
// `m.response.status_code:500` (or `-m.response.status_code:500`).

/**
 * lqlPath turns the path of a value in an event (keys and array indices
 * from the root) into an LQL field path: metadata.* is written m.*, array
 * indices are dropped (LQL matches any element). It reports whether the
 * value is an element of an array of scalars (which takes `:@>`).
 */
export function lqlPath(keys) {
  const names = keys.filter((k) => typeof k === 'string');
  const inArray = keys.length > 0 && typeof keys[keys.length - 1] === 'number';
  let p = names.join('.');
  if (p.startsWith('metadata.')) p = 'm.' + p.slice('metadata.'.length);
  return {path: p, inArray};
}

/** filterable says whether a clicked value can become a filter. */
export function filterable(keys, value) {
  if (value !== null && typeof value === 'object') return false;
  const {path} = lqlPath(keys);
  return path !== '' && path !== 'timestamp' && /^[A-Za-z0-9_.]+$/.test(path);
}

/** valueText writes a value as LQL reads it back. */
export function valueText(v) {
  if (v === null || v === undefined) return 'NULL';
  if (typeof v === 'boolean' || typeof v === 'number') return String(v);
  const s = String(v);
  if (/^[A-Za-z0-9_]+$/.test(s) && s.toUpperCase() !== 'NULL') return s;
  return '"' + s.replace(/\\/g, '\\\\').replace(/"/g, '\\"') + '"';
}

/** clause writes the filter for keys = value, negated when exclude. */
export function clause(keys, value, exclude) {
  const {path, inArray} = lqlPath(keys);
  const op = inArray ? ':@>' : ':';
  return (exclude ? '-' : '') + path + op + valueText(value);
}

/**
 * addClause returns query with c added: unchanged when c is already there,
 * and replacing its opposite (the same clause with or without `-`).
 */
export function addClause(query, c) {
  const words = splitClauses(query);
  const opposite = c.startsWith('-') ? c.slice(1) : '-' + c;
  const kept = words.filter((w) => w !== opposite);
  if (!kept.includes(c)) kept.push(c);
  return kept.join(' ');
}

/**
 * splitClauses splits a query at whitespace outside quotes and parentheses,
 * as the LQL parser delimits clauses.
 */
export function splitClauses(q) {
  const out = [];
  let cur = '';
  let quote = false;
  let depth = 0;
  for (let i = 0; i < q.length; i++) {
    const ch = q[i];
    if (quote) {
      cur += ch;
      if (ch === '\\' && i + 1 < q.length) { cur += q[++i]; continue; }
      if (ch === '"') quote = false;
      continue;
    }
    if (ch === '"') { quote = true; cur += ch; continue; }
    if (ch === '(') depth++;
    if (ch === ')' && depth > 0) depth--;
    if (/\s/.test(ch) && depth === 0) {
      if (cur) out.push(cur);
      cur = '';
      continue;
    }
    cur += ch;
  }
  if (cur) out.push(cur);
  return out;
}

/** hasChart says whether the query has a c: (chart:) clause. */
export function hasChart(q) {
  return splitClauses(q).some((w) => /^(c|chart):/i.test(w));
}

/** chartPeriod returns the period of a written c:group_by, or ''. */
export function chartPeriod(q) {
  let period = '';
  for (const w of splitClauses(q)) {
    const m = /^(?:c|chart):group_by\(\s*(?:t|timestamp)::(\w+)\s*\)$/i.exec(w);
    if (m) period = normalPeriod(m[1]);
  }
  return period;
}

/** chartAggregate returns the written aggregate ("count(*)", "avg(m.x)") or ''. */
export function chartAggregate(q) {
  for (const w of splitClauses(q)) {
    const m = /^(?:c|chart):(?!group_by)(\w+\(.*\))$/i.exec(w);
    if (m) return m[1];
  }
  return '';
}

function normalPeriod(p) {
  switch (p.toLowerCase()) {
    case 's': case 'second': return 'second';
    case 'm': case 'minute': return 'minute';
    case 'h': case 'hour': return 'hour';
    case 'd': case 'day': return 'day';
  }
  return '';
}

/** Bucket periods in µs. */
export const periodMicros = {second: 1e6, minute: 60e6, hour: 3600e6, day: 86400e6};
