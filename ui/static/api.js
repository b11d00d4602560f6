// Calls to Sediment's HTTP API. The key lives in sessionStorage only: it is
// gone when the tab closes, and it is never put in a URL.

const keyName = 'sediment.key';

export function getKey() { return sessionStorage.getItem(keyName) || ''; }
export function setKey(k) { sessionStorage.setItem(keyName, k); }
export function clearKey() { sessionStorage.removeItem(keyName); }

/** apiURL resolves an API path against the page (works behind a path prefix). */
export function apiURL(path, params) {
  const u = new URL(path, document.baseURI);
  if (params) {
    for (const [k, v] of Object.entries(params)) {
      if (v !== undefined && v !== null && v !== '') u.searchParams.set(k, String(v));
    }
  }
  return u;
}

/**
 * call fetches path with the key and decodes the JSON answer.
 * It resolves to {status, body, headers, ms}; body is null when the answer is not JSON.
 * Network failures reject.
 */
export async function call(path, {params, method = 'GET', body, signal, key} = {}) {
  const headers = {'X-API-KEY': key ?? getKey(), 'Accept': 'application/json'};
  let payload;
  if (body !== undefined) {
    headers['Content-Type'] = 'application/json';
    payload = JSON.stringify(body);
  }
  const t0 = performance.now();
  const res = await fetch(apiURL(path, params), {method, headers, body: payload, signal, cache: 'no-store'});
  const text = await res.text();
  const ms = performance.now() - t0;
  let json = null;
  try { json = text ? JSON.parse(text) : null; } catch { json = null; }
  return {status: res.status, body: json, headers: res.headers, ms};
}

/** errorText names what went wrong in an API answer. */
export function errorText(r) {
  if (r.body && typeof r.body.error === 'string') return r.body.error;
  if (r.body && r.body.errors) return JSON.stringify(r.body.errors);
  return 'HTTP ' + r.status;
}

/** sourcePath is the API path of a source's sub-resource. */
export function sourcePath(source, sub) {
  return 'api/sources/' + encodeURIComponent(source) + '/' + sub;
}
