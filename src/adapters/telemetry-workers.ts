// Traces on Cloudflare Workers (TRACING_ENABLED): spans recorded by telemetry/span-recorder.ts and
// encoded as they end (http/protobuf or http/json, OTEL_EXPORTER_OTLP_PROTOCOL), then POSTed with
// fetch inside ctx.waitUntil once the request has answered. Neither the SDK's tracer nor its
// browser exporter is used: the exporter's fetch transport is built around browser keepalive
// quotas, and a span encoded at once costs the isolate's CPU less than one kept until the flush.
// Child spans (statements, hashing, outgoing calls) need no async context: the request's deps
// carry their parent (deps-telemetry.ts), so they are recorded here as on Node.
// Metrics are not exported here (no listener to scrape, no timer between requests).
import { propagation, trace } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import type { Config } from '../config/types.ts';
import type { Logger } from '../telemetry/logger.ts';
import { otlpSignalUrl, parseKeyValues, resourceAttributes } from '../telemetry/otel-config.ts';
import { spanEncoder } from '../telemetry/otlp-trace-encoding.ts';
import { SpanRecorder } from '../telemetry/span-recorder.ts';

export interface WorkersTracing {
  /** Sends the spans ended so far; never throws (a failed export is logged). */
  flush(): Promise<void>;
}

/** At most this many spans wait for an export; beyond it new ones are dropped (and counted). */
const MAX_PENDING = 2048;

export function startWorkersTracing(config: Config, version: string, logger: Logger, fetchFn: typeof fetch): WorkersTracing {
  const encoder = spanEncoder(config.otel.exporterOtlpProtocol === 'http/json' ? 'http/json' : 'http/protobuf', resourceAttributes(config, version));
  let dropped = 0;
  const recorder = new SpanRecorder({
    sink: {
      onEnd: (span) => {
        if (encoder.pending >= MAX_PENDING) dropped++;
        else encoder.add(span);
      },
      forceFlush: async () => undefined,
      shutdown: async () => undefined,
    },
  });
  trace.setGlobalTracerProvider(recorder);
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  const url = otlpSignalUrl(config, 'traces') ?? 'http://localhost:4318/v1/traces';
  const headers = { ...parseKeyValues(config.otel.exporterOtlpHeaders), 'content-type': encoder.contentType };
  return {
    async flush() {
      if (dropped > 0) {
        logger.warn('trace spans dropped: more were waiting than one export holds', { spans: dropped });
        dropped = 0;
      }
      const batch = encoder.take();
      if (!batch) return;
      try {
        const res = await fetchFn(url, { method: 'POST', headers, body: batch.body as Uint8Array<ArrayBuffer> });
        await res.body?.cancel();
        if (!res.ok) logger.warn('trace export refused', { status: res.status, spans: batch.length });
      } catch (err) {
        logger.warn('trace export failed', { error: err instanceof Error ? err.message : String(err), spans: batch.length });
      }
    },
  };
}
