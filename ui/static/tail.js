// Live tail: the source's new events that match the LQL, read from the
// Server-Sent Events stream GET /api/sources/:source/tail. fetch reads the
// stream (EventSource cannot send the key in a header).

import {apiURL, getKey, sourcePath} from './api.js';

/**
 * startTail opens a tail. Handlers: onEvents(list) with parsed events in
 * arrival order, onDropped(n) with the count the server dropped for this
 * tail, onStatus(text, ok) when the stream opens, fails or ends.
 * It returns {stop()}.
 */
export function startTail(source, lql, {onEvents, onDropped, onStatus}) {
  const ctl = new AbortController();
  let stopped = false;

  (async () => {
    let res;
    try {
      res = await fetch(apiURL(sourcePath(source, 'tail'), {lql}), {
        headers: {'X-API-KEY': getKey(), 'Accept': 'text/event-stream'}, signal: ctl.signal, cache: 'no-store'});
    } catch (err) {
      if (!stopped) onStatus('Live tail failed: ' + err.message, false);
      return;
    }
    if (res.status !== 200) {
      let msg = 'HTTP ' + res.status;
      try { msg = (await res.json()).error || msg; } catch { /* not JSON */ }
      onStatus('Live tail refused: ' + msg, false);
      return;
    }
    onStatus('connected', true);
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    let buf = '';
    try {
      for (;;) {
        const {value, done} = await reader.read();
        if (done) break;
        buf += value;
        let cut;
        const batch = [];
        while ((cut = buf.indexOf('\n\n')) >= 0) {
          const frame = buf.slice(0, cut);
          buf = buf.slice(cut + 2);
          handleFrame(frame, batch);
        }
        if (batch.length) onEvents(batch);
      }
      if (!stopped) onStatus('The server ended the live tail.', false);
    } catch (err) {
      if (!stopped) onStatus('Live tail interrupted: ' + err.message, false);
    }
  })();

  function handleFrame(frame, batch) {
    let type = 'message';
    const data = [];
    for (const line of frame.split('\n')) {
      if (line.startsWith(':')) continue; // comment: hello, keep-alive
      const i = line.indexOf(':');
      const field = i < 0 ? line : line.slice(0, i);
      const val = i < 0 ? '' : line.slice(i + 1).replace(/^ /, '');
      if (field === 'event') type = val;
      if (field === 'data') data.push(val);
    }
    if (data.length === 0) return;
    try {
      const obj = JSON.parse(data.join('\n'));
      if (type === 'log') batch.push(obj);
      else if (type === 'dropped') onDropped(Number(obj.count) || 0);
    } catch { /* a frame that is not JSON is skipped */ }
  }

  return {stop() { stopped = true; ctl.abort(); }};
}
