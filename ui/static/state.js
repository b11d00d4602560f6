// The view state lives in the URL's hash (#/search?source=...&q=...), so a
// link can be shared and the back button works. The key is never in it.

/** read parses location.hash into {view, params}. */
export function read() {
  const raw = location.hash.replace(/^#\/?/, '');
  const q = raw.indexOf('?');
  const view = (q < 0 ? raw : raw.slice(0, q)) || '';
  const params = new URLSearchParams(q < 0 ? '' : raw.slice(q + 1));
  return {view, params};
}

/** href builds a hash link for view with params (an object or URLSearchParams). */
export function href(view, params) {
  let p = new URLSearchParams();
  if (params instanceof URLSearchParams) p = params;
  else if (params) {
    for (const [k, v] of Object.entries(params)) {
      if (v !== undefined && v !== null && v !== '') p.set(k, String(v));
    }
  }
  const s = p.toString();
  return '#/' + view + (s ? '?' + s : '');
}

// shown is the hash the page shows; a hashchange or popstate to it needs no
// new render.
let shown = '';

/** markShown records that the page shows the current hash. */
export function markShown() { shown = location.hash; }

/** isShown says whether the current hash is already on screen. */
export function isShown() { return shown === location.hash; }

/**
 * write puts the state the view now shows in the URL, without rendering
 * again: a new history entry, or with replace the same one (small changes
 * such as the time zone toggle).
 */
export function write(view, params, {replace = false} = {}) {
  const next = href(view, params);
  if (next !== location.hash) {
    if (replace) history.replaceState(null, '', next);
    else history.pushState(null, '', next);
  }
  shown = location.hash;
}
