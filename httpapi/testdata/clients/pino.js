// Logs through pino and pino-logflare to a Sediment server, as a Node
// application configured for Logflare would, with both of pino-logflare's
// APIs:
//   - the pino transport (a worker thread; pino >= 7), to <transport source>;
//   - createWriteStream (in-process stream), to <stream source>.
//
// Usage: node pino.js <api base url> <api key> <transport source> <stream source>
// Run by httpapi's TestPinoLogflare, which then reads the events back.
"use strict";

const pino = require("pino");
const { createWriteStream } = require("pino-logflare");

const [apiBaseUrl, apiKey, transportSource, streamSource] = process.argv.slice(2);
if (!apiBaseUrl || !apiKey || !transportSource || !streamSource) {
  console.error("usage: node pino.js <api base url> <api key> <transport source> <stream source>");
  process.exit(2);
}

const base = { service: "checkout", hostname: "web-1", pid: 4242 };

function logSome(logger) {
  logger.info({ user: { id: "u-1", plan: "pro" }, request_id: "r-1" }, "hello from pino");
  logger.error({ code: 42, retry: false }, "payment failed");
  logger.warn("low stock");
}

async function viaStream() {
  const stream = createWriteStream({ apiBaseUrl, apiKey, sourceToken: streamSource, size: 2 });
  logSome(pino({ base }, stream));
  await new Promise((resolve, reject) => {
    stream.on("finish", resolve);
    stream.on("error", reject);
    stream.end();
  });
}

async function viaTransport() {
  // batchSize 1: each event is sent as it comes. pino-logflare 0.5.2 sends
  // a batch still pending when the transport closes twice (its end-of-
  // stream flush and its close hook both run before the batch is cleared),
  // so the transport is closed only once the sends are done.
  const transport = pino.transport({
    target: "pino-logflare",
    options: { apiBaseUrl, apiKey, sourceToken: transportSource, batchSize: 1, debug: true },
  });
  const logger = pino({ base }, transport);
  logSome(logger);
  await new Promise((resolve) => logger.flush(resolve));
  await new Promise((resolve) => setTimeout(resolve, 500));
  await new Promise((resolve) => {
    transport.on("close", resolve);
    transport.end();
  });
}

viaStream()
  .then(viaTransport)
  .then(
    () => process.exit(0),
    (err) => {
      console.error(err);
      process.exit(1);
    },
  );
