// Traces on Cloudflare Workers (TRACING_ENABLED): the OpenTelemetry SDK's tracer provider and
// BatchSpanProcessor, exporting OTLP/HTTP (http/protobuf or http/json, OTEL_EXPORTER_OTLP_PROTOCOL)
// with the exporters' fetch transport; flush() sends what the request's spans left in the queue,
// called inside ctx.waitUntil once the request has answered (an isolate has no timer between
// requests). Child spans (statements, hashing, outgoing calls) need no async context: the
// request's deps carry their parent (deps-telemetry.ts), so they are recorded here as on Node.
// Metrics are not exported here (no listener to scrape, no timer between requests).
import { propagation, trace } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter as JsonTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtobufTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import type { Config } from '../config/types.ts';
import type { Logger } from '../telemetry/logger.ts';
import { otlpSignalUrl, parseKeyValues, resourceAttributes } from '../telemetry/otel-config.ts';
import { otelDiagnostics } from '../telemetry/otel-diagnostics.ts';

export interface WorkersTracing {
  /** Sends the spans ended so far; never throws (a failed export is logged). */
  flush(): Promise<void>;
}

/** At most this many spans wait for an export; beyond it new ones are dropped (and logged). */
const MAX_QUEUE = 2048;

export function startWorkersTracing(config: Config, version: string, logger: Logger): WorkersTracing {
  const headers = parseKeyValues(config.otel.exporterOtlpHeaders);
  otelDiagnostics(logger, Object.values(headers), config.debug);
  const options = { url: otlpSignalUrl(config, 'traces') ?? 'http://localhost:4318/v1/traces', headers };
  const exporter =
    config.otel.exporterOtlpProtocol === 'http/json'
      ? new JsonTraceExporter(options)
      : new ProtobufTraceExporter(options);
  const provider = new TracerProvider({
    resource: resourceFromAttributes(resourceAttributes(config, version)),
    // Exported by flush() after each request, or by the processor once a full batch is waiting.
    spanProcessors: [
      new BatchSpanProcessor({
        exporter,
        maxQueueSize: MAX_QUEUE,
        maxExportBatchSize: 512,
        disableAutoFlushOnDocumentHide: true,
      }),
    ],
  });
  trace.setGlobalTracerProvider(provider);
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  return {
    async flush() {
      try {
        await provider.forceFlush();
      } catch (err) {
        logger.warn('trace export failed', { error: err instanceof Error ? err.message : String(err) });
      }
    },
  };
}
