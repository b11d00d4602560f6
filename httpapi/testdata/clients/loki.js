// Logs through pino and the real pino-loki transport (npm) to a Sediment
// server, as a Node application shipping to Grafana Loki would: JSON push
// requests to /loki/api/v1/push, basic auth with the key as password, the
// source named by a "source" label, "meta" sent as structured metadata.
//
// Usage: node loki.js <base url> <api key> <source name>
// Run by httpapi's TestPinoLoki, which reads the events back.
"use strict";

const pino = require("pino");

const [host, apiKey, sourceName] = process.argv.slice(2);
if (!host || !apiKey || !sourceName) {
  console.error("usage: node loki.js <base url> <api key> <source name>");
  process.exit(2);
}

async function main() {
  // Batches go out every 60 s or when the transport closes: here, once, at
  // close (which waits for the push).
  const transport = pino.transport({
    target: "pino-loki",
    options: {
      host,
      basicAuth: { username: "sediment", password: apiKey },
      labels: { source: sourceName, app: "shop" },
      batching: { interval: 60 },
    },
  });
  const logger = pino({ base: { hostname: "web-1", pid: 4242 } }, transport);
  logger.info({ user: { id: "u-1", plan: "pro" }, meta: { trace: "t-1" } }, "hello loki");
  logger.warn({ sku: "s-9", left: 3 }, "low stock");
  logger.error({ code: 42, retry: false }, "payment failed");
  await new Promise((resolve) => logger.flush(resolve));
  await new Promise((resolve) => {
    transport.on("close", resolve);
    transport.end();
  });
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
