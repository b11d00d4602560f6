// Indexes log documents into a Sediment server with the official
// Elasticsearch JS client (npm @elastic/elasticsearch), as an application
// or a shipper writing to Elasticsearch would:
//   - client.info() (the version probe);
//   - client.helpers.bulk with the key as an API key, "create" actions into
//     <source name>, plus one document for an index that is no source (the
//     helper must report it dropped with a 404);
//   - client.bulk with basic auth (the key as password), "index" actions
//     with explicit _ids.
// It prints one JSON line with what it saw.
//
// Usage: node elasticsearch.js <base url> <api key> <source name>
// Run by httpapi's TestElasticsearchClient.
"use strict";

const { Client } = require("@elastic/elasticsearch");

const [node, apiKey, index] = process.argv.slice(2);
if (!node || !apiKey || !index) {
  console.error("usage: node elasticsearch.js <base url> <api key> <source name>");
  process.exit(2);
}

async function main() {
  const client = new Client({ node, auth: { apiKey } });
  const info = await client.info();

  const docs = [
    { "@timestamp": "2025-07-10T12:00:05.123Z", message: "GET /a 200", http: { method: "GET", status: 200 }, host: { name: "web-1" } },
    { "@timestamp": "2025-07-10T12:00:06Z", message: "POST /b 502", http: { method: "POST", status: 502 }, tags: ["edge", "x"] },
    { "@timestamp": "2025-07-10T12:00:07Z", message: "to nowhere", target: "missing-index" },
  ];
  const dropped = [];
  const stats = await client.helpers.bulk({
    datasource: docs,
    onDocument(doc) {
      return { create: { _index: doc.target ? "no-such-source" : index } };
    },
    onDrop(drop) {
      dropped.push({ status: drop.status, type: drop.error && drop.error.type, message: drop.document.message });
    },
    retries: 0,
  });

  const basic = new Client({ node, auth: { username: "elastic", password: apiKey } });
  const res = await basic.bulk({
    operations: [
      { index: { _index: index, _id: "doc-1" } },
      { "@timestamp": "2025-07-10T12:00:08Z", message: "indexed with an id", level: "warn" },
      { index: { _index: index, _id: "doc-2" } },
      { "@timestamp": "2025-07-10T12:00:09Z", message: "second with an id", level: "error" },
    ],
  });

  console.log(JSON.stringify({
    version: info.version.number,
    tagline: info.tagline,
    stats: { total: stats.total, successful: stats.successful, failed: stats.failed },
    dropped,
    bulk: { errors: res.errors, items: res.items.map((it) => ({ status: it.index.status, id: it.index._id, result: it.index.result })) },
  }));
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
