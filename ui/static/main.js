// Start-up: sign-in, navigation between the views, the time zone toggle and
// keyboard shortcuts.

import {h, clear} from './dom.js';
import * as api from './api.js';
import * as state from './state.js';
import * as time from './time.js';
import * as sources from './sources.js';
import * as search from './search.js';
import * as endpoints from './endpoints.js';

const root = document.getElementById('view');
const nav = document.getElementById('nav');
const tzButton = document.getElementById('tz');
const signOutButton = document.getElementById('signout');

const views = {sources, search, endpoints};

/** The signed-in key's /api/access answer, or null. */
let access = null;
/** The view on screen: {name, ctl} where ctl may have dispose() and onZone(). */
let current = null;

function allowed(name) {
  if (!access) return false;
  switch (name) {
    case 'sources': return access.manage;
    case 'search': return access.search;
    case 'endpoints': return access.endpoints.length > 0 || access.manage;
  }
  return false;
}

function defaultView() {
  return ['sources', 'search', 'endpoints'].find(allowed) || '';
}

/** refreshAccess reloads what the key may reach (sources with their counts). */
async function refreshAccess() {
  const r = await api.call('api/access');
  if (r.status === 200 && r.body) access = r.body;
  return r;
}

function showSignIn(message) {
  disposeCurrent();
  nav.hidden = true;
  tzButton.hidden = true;
  signOutButton.hidden = true;
  const input = h('input', {type: 'password', id: 'key', name: 'key', autocomplete: 'off', required: true,
    'aria-describedby': 'signin-error', placeholder: 'private key or a key with scope query'});
  const error = h('p', {id: 'signin-error', class: 'error', role: 'alert'}, message || '');
  const button = h('button', {type: 'submit', class: 'primary'}, 'Sign in');
  const form = h('form', {class: 'signin', onsubmit: async (e) => {
    e.preventDefault();
    const key = input.value.trim();
    if (!key) return;
    button.disabled = true;
    error.textContent = '';
    try {
      const r = await api.call('api/access', {key});
      if (r.status !== 200 || !r.body) {
        error.textContent = r.status === 401 ? 'This key was not accepted.' : 'Sign-in failed: ' + api.errorText(r);
        input.select();
        return;
      }
      api.setKey(key);
      access = r.body;
      signedIn();
    } catch (err) {
      error.textContent = 'The server did not answer: ' + err.message;
    } finally {
      button.disabled = false;
    }
  }},
  h('h1', null, 'Sign in to Sediment'),
  h('label', {for: 'key'}, 'Access key'),
  input, button, error,
  h('p', {class: 'hint'}, 'The key is kept in this browser tab only (sessionStorage) and sent with each request.'));
  clear(root, form);
  input.focus();
}

function signedIn() {
  for (const a of nav.querySelectorAll('a')) a.hidden = !allowed(a.dataset.view);
  nav.hidden = false;
  tzButton.hidden = false;
  signOutButton.hidden = false;
  if (!defaultView()) {
    disposeCurrent();
    clear(root, h('div', {class: 'notice'},
      h('p', null, 'This key may only send events (scopes: ' + access.scopes.join(', ') + ').'),
      h('p', null, 'Sign in with the private key, or a key with scope query, to search and run endpoints.')));
    return;
  }
  route();
}

function route() {
  let {view, params} = state.read();
  time.setLocal(params.get('tz') === 'local');
  updateZoneButton();
  if (!allowed(view)) {
    view = defaultView();
    const p = new URLSearchParams();
    if (time.isLocal()) p.set('tz', 'local');
    history.replaceState(null, '', state.href(view, p));
    params = p;
  }
  state.markShown();
  for (const a of nav.querySelectorAll('a')) {
    a.href = state.href(a.dataset.view, time.isLocal() ? {tz: 'local'} : null);
    if (a.dataset.view === view) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  disposeCurrent();
  clear(root);
  const ctl = views[view].render(root, {access, params, refreshAccess, signOut});
  current = {name: view, ctl};
  document.title = 'Sediment · ' + view[0].toUpperCase() + view.slice(1);
}

function disposeCurrent() {
  if (current && current.ctl && current.ctl.dispose) current.ctl.dispose();
  current = null;
}

function updateZoneButton() {
  tzButton.textContent = 'Times: ' + (time.isLocal() ? time.zoneLabel() : 'UTC');
  tzButton.setAttribute('aria-pressed', time.isLocal() ? 'true' : 'false');
}

function toggleZone() {
  time.setLocal(!time.isLocal());
  updateZoneButton();
  const {view, params} = state.read();
  if (time.isLocal()) params.set('tz', 'local'); else params.delete('tz');
  state.write(view, params, {replace: true});
  if (current && current.ctl && current.ctl.onZone) current.ctl.onZone();
}

function signOut(message) {
  api.clearKey();
  access = null;
  showSignIn(message);
}

function onNavigate() {
  if (!access || state.isShown()) return;
  route();
}

document.addEventListener('keydown', (e) => {
  if (e.key !== '/' || e.ctrlKey || e.metaKey || e.altKey) return;
  const t = e.target;
  if (t instanceof HTMLElement && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName))) return;
  const box = document.querySelector('[data-focus-slash]');
  if (box) { e.preventDefault(); box.focus(); box.select?.(); }
});
tzButton.addEventListener('click', toggleZone);
signOutButton.addEventListener('click', () => signOut(''));
window.addEventListener('hashchange', onNavigate);
window.addEventListener('popstate', onNavigate);

(async function start() {
  if (!api.getKey()) { showSignIn(); return; }
  try {
    const r = await refreshAccess();
    if (r.status === 200) { signedIn(); return; }
    api.clearKey();
    showSignIn(r.status === 401 ? 'The key of this session is no longer accepted.' : '');
  } catch (err) {
    showSignIn('The server did not answer: ' + err.message);
  }
})();
