// Logs through OpenTelemetry's JS logs SDK and its OTLP/HTTP exporter to a
// Sediment server, as a Node application instrumented with OpenTelemetry
// would. The encoding is chosen by the exporter package:
//   - json:  @opentelemetry/exporter-logs-otlp-http (OTLP/JSON), key as
//            Authorization: Bearer, source chosen by the resource's
//            service.name;
//   - proto: @opentelemetry/exporter-logs-otlp-proto (protobuf, gzip), key
//            as x-api-key, source named by the X-Source header.
//
// Usage: node otlp.js <base url> <api key> <json|proto> <source name>
// Run by httpapi's TestOTLPClients, which reads the events back and
// compares them with the records below.
"use strict";

const { context, trace, TraceFlags } = require("@opentelemetry/api");
const { SeverityNumber } = require("@opentelemetry/api-logs");
const { LoggerProvider, BatchLogRecordProcessor } = require("@opentelemetry/sdk-logs");
const { resourceFromAttributes } = require("@opentelemetry/resources");

const [base, apiKey, encoding, sourceName] = process.argv.slice(2);
if (!base || !apiKey || !sourceName || (encoding !== "json" && encoding !== "proto")) {
  console.error("usage: node otlp.js <base url> <api key> <json|proto> <source name>");
  process.exit(2);
}

let exporter;
let serviceName;
if (encoding === "json") {
  const { OTLPLogExporter } = require("@opentelemetry/exporter-logs-otlp-http");
  exporter = new OTLPLogExporter({ url: base + "/v1/logs", headers: { Authorization: "Bearer " + apiKey } });
  serviceName = sourceName;
} else {
  const { OTLPLogExporter } = require("@opentelemetry/exporter-logs-otlp-proto");
  exporter = new OTLPLogExporter({
    url: base + "/v1/logs",
    headers: { "x-api-key": apiKey, "X-Source": sourceName },
    compression: "gzip",
  });
  serviceName = "checkout";
}

const provider = new LoggerProvider({
  resource: resourceFromAttributes({
    "service.name": serviceName,
    "service.version": "2.0.1",
    "deployment.environment.name": "test",
  }),
  processors: [new BatchLogRecordProcessor({ exporter })],
});
const logger = provider.getLogger("sediment-test", "1.2.3");

const spanContext = {
  traceId: "5b8efff798038103d269b633813fc60c",
  spanId: "eee19b7ec3c1b174",
  traceFlags: TraceFlags.SAMPLED,
  isRemote: false,
};

logger.emit({
  timestamp: new Date(1752148805123),
  severityNumber: SeverityNumber.INFO,
  severityText: "INFO",
  body: "order placed",
  attributes: {
    "order.id": "o-1",
    "order.total": 42.5,
    "http.request.method": "POST",
    user: "u-1",
    retry: false,
    tags: ["a", "b"],
  },
  context: trace.setSpanContext(context.active(), spanContext),
});
logger.emit({
  timestamp: new Date(1752148806000),
  severityNumber: SeverityNumber.WARN,
  severityText: "WARN",
  body: { event: "low_stock", sku: "s-9", left: 3 },
  attributes: { warehouse: "w1" },
});
logger.emit({
  timestamp: new Date(1752148807000),
  severityNumber: SeverityNumber.ERROR,
  severityText: "ERROR",
  eventName: "payment.failure",
  body: "payment failed",
  attributes: { code: 42 },
});
// No timestamp: the SDK sets the observed time, which the server uses.
logger.emit({ severityText: "debug", body: "no timestamp" });

provider.shutdown().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
