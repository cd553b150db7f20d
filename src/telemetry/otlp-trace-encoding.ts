// Finished spans encoded as OTLP the moment they end (span-recorder.ts hands them over), so a
// span object dies young and a batch waiting for export is one growing byte buffer per
// instrumentation scope. `take()` wraps what is pending in an ExportTraceServiceRequest.
//
// http/protobuf in otlp-trace-protobuf.ts, http/json in otlp-trace-json.ts: each is what the SDK's
// serializer writes for the same spans (otlp-trace-encoding.test.ts checks both).
import type { Attributes } from '@opentelemetry/api';
import type { OtlpProtocol, SpanEncoder } from './otlp-spans.ts';
import { JsonSpanEncoder } from './otlp-trace-json.ts';
import { ProtobufSpanEncoder } from './otlp-trace-protobuf.ts';

export type { EncodedBatch, OtlpProtocol, SpanEncoder } from './otlp-spans.ts';

export function spanEncoder(protocol: OtlpProtocol, resource: Attributes): SpanEncoder {
  return protocol === 'http/json' ? new JsonSpanEncoder(resource) : new ProtobufSpanEncoder(resource);
}
