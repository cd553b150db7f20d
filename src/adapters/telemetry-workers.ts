// Traces on Cloudflare Workers (TRACING_ENABLED): the SDK's tracer provider, spans kept in the
// isolate until the request has answered, then serialized by the SDK's own OTLP serializer
// (http/protobuf or http/json) and POSTed with fetch inside ctx.waitUntil. The SDK's browser
// exporter is not used: its fetch transport is built around browser keepalive quotas.
// Child spans (statements, hashing, outgoing calls) need no async context: the request's deps
// carry their parent (deps-telemetry.ts), so they are recorded here as on Node.
// Metrics are not exported here (no listener to scrape, no timer between requests).
import { propagation, trace } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { JsonTraceSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { type ReadableSpan, type SpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import type { Config } from '../config/types.ts';
import type { Logger } from '../telemetry/logger.ts';
import { otlpSignalUrl, parseKeyValues, resourceAttributes } from '../telemetry/otel-config.ts';

export interface WorkersTracing {
  /** Sends the spans ended so far; never throws (a failed export is logged). */
  flush(): Promise<void>;
}

/** At most this many spans wait for an export; beyond it the oldest are dropped. */
const MAX_PENDING = 2048;

export function startWorkersTracing(config: Config, version: string, logger: Logger, fetchFn: typeof fetch): WorkersTracing {
  const pending: ReadableSpan[] = [];
  const processor: SpanProcessor = {
    onStart: () => undefined,
    onEnd: (span) => {
      if (pending.push(span) > MAX_PENDING) pending.shift();
    },
    forceFlush: async () => undefined,
    shutdown: async () => undefined,
  };
  trace.setGlobalTracerProvider(new TracerProvider({ resource: resourceFromAttributes(resourceAttributes(config, version)), spanProcessors: [processor] }));
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  const json = config.otel.exporterOtlpProtocol === 'http/json';
  const url = otlpSignalUrl(config, 'traces') ?? 'http://localhost:4318/v1/traces';
  const headers = { ...parseKeyValues(config.otel.exporterOtlpHeaders), 'content-type': json ? 'application/json' : 'application/x-protobuf' };
  return {
    async flush() {
      if (pending.length === 0) return;
      const spans = pending.splice(0);
      const body = (json ? JsonTraceSerializer : ProtobufTraceSerializer).serializeRequest(spans);
      if (!body) return;
      try {
        const res = await fetchFn(url, { method: 'POST', headers, body: body as Uint8Array<ArrayBuffer> });
        await res.body?.cancel();
        if (!res.ok) logger.warn('trace export refused', { status: res.status, spans: spans.length });
      } catch (err) {
        logger.warn('trace export failed', { error: err instanceof Error ? err.message : String(err), spans: spans.length });
      }
    },
  };
}
