// OTLP/JSON span encoding (http/json), as the SDK's JsonTraceSerializer writes it: hex ids,
// nanosecond timestamps as decimal strings, enums as numbers.
import type { Attributes, AttributeValue } from '@opentelemetry/api';
import { type EncodedBatch, type SpanEncoder, batch, nanos, spanFlags } from './otlp-spans.ts';
import type { FinishedSpan, Scope } from './span-recorder.ts';

const utf8 = new TextEncoder();

type JsonAnyValue = Record<string, unknown>;

function jsonAnyValue(value: unknown): JsonAnyValue {
  if (typeof value === 'string') return { stringValue: value };
  if (typeof value === 'boolean') return { boolValue: value };
  if (typeof value === 'number') return Number.isInteger(value) ? { intValue: value } : { doubleValue: value };
  if (value instanceof Uint8Array) return { bytesValue: base64(value) };
  if (Array.isArray(value)) return { arrayValue: { values: value.map(jsonAnyValue) } };
  if (typeof value === 'object' && value !== null) return { kvlistValue: { values: jsonAttributes(value as Attributes) } };
  return {};
}

function jsonAttributes(attributes: Attributes): { key: string; value: JsonAnyValue }[] {
  const out: { key: string; value: JsonAnyValue }[] = [];
  for (const key in attributes) if (Object.hasOwn(attributes, key)) out.push({ key, value: jsonAnyValue(attributes[key] as AttributeValue) });
  return out;
}

function base64(b: Uint8Array): string {
  let s = '';
  for (const byte of b) s += String.fromCharCode(byte);
  return btoa(s);
}

function jsonSpan(s: FinishedSpan): string {
  return JSON.stringify({
    traceId: s.traceId,
    spanId: s.spanId,
    parentSpanId: s.parentSpanId || undefined,
    traceState: s.traceState?.serialize(),
    name: s.name,
    kind: s.kind + 1,
    startTimeUnixNano: nanos(s.startTime).toString(),
    endTimeUnixNano: nanos(s.endTime).toString(),
    attributes: jsonAttributes(s.attributes),
    droppedAttributesCount: s.droppedAttributesCount,
    events: s.events.map((e) => ({
      attributes: jsonAttributes(e.attributes), name: e.name, timeUnixNano: nanos(e.time).toString(), droppedAttributesCount: e.droppedAttributesCount,
    })),
    droppedEventsCount: s.droppedEventsCount,
    status: { code: s.statusCode, message: s.statusMessage },
    links: s.links.map((l) => ({
      attributes: jsonAttributes(l.attributes), spanId: l.context.spanId, traceId: l.context.traceId,
      traceState: l.context.traceState?.serialize(), droppedAttributesCount: 0, flags: spanFlags(l.context.traceFlags, l.context.isRemote),
    })),
    droppedLinksCount: s.droppedLinksCount,
    flags: spanFlags(s.traceFlags, s.parentIsRemote),
  });
}

export class JsonSpanEncoder implements SpanEncoder {
  readonly contentType = 'application/json';
  pending = 0;
  pendingBytes = 0;
  private readonly resource: string;
  private readonly scopes = new Map<Scope, string[]>();

  constructor(resource: Attributes) {
    this.resource = JSON.stringify({ attributes: jsonAttributes(resource), droppedAttributesCount: 0 });
  }

  add(span: FinishedSpan): void {
    let list = this.scopes.get(span.scope);
    if (!list) {
      list = [];
      this.scopes.set(span.scope, list);
    }
    const json = jsonSpan(span);
    list.push(json);
    this.pending++;
    this.pendingBytes += json.length;
  }

  take(): EncodedBatch | undefined {
    if (this.pending === 0) return undefined;
    const scopeSpans: string[] = [];
    for (const [scope, spans] of this.scopes) {
      if (spans.length === 0) continue;
      scopeSpans.push(`{"scope":${JSON.stringify({ name: scope.name, version: scope.version })},"spans":[${spans.join(',')}]}`);
      spans.length = 0;
    }
    const body = utf8.encode(`{"resourceSpans":[{"resource":${this.resource},"scopeSpans":[${scopeSpans.join(',')}]}]}`);
    const out = batch(body, this.pending);
    this.pending = 0;
    this.pendingBytes = 0;
    return out;
  }
}
