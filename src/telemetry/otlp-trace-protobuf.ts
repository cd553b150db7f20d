// OTLP/protobuf span encoding (http/protobuf): field numbers from opentelemetry-proto
// (trace/v1/trace.proto, common/v1, resource/v1). The output is byte for byte what the SDK's
// ProtobufTraceSerializer writes for the same spans (otlp-trace-encoding.test.ts checks it).
import type { Attributes } from '@opentelemetry/api';
import { type EncodedBatch, type SpanEncoder, batch, nanos, spanFlags } from './otlp-spans.ts';
import { ProtoWriter, varintSize } from './protobuf-writer.ts';
import type { FinishedSpan, Scope, SpanEvent, SpanLink } from './span-recorder.ts';

// AnyValue: 1 string, 2 bool, 3 int64, 4 double, 5 ArrayValue (1: repeated AnyValue),
// 6 KeyValueList (1: repeated KeyValue), 7 bytes. KeyValue: 1 key, 2 value.
function writeAnyValue(w: ProtoWriter, value: unknown): void {
  if (typeof value === 'string') {
    w.tag(1, 2);
    w.string(value);
  } else if (typeof value === 'boolean') {
    w.tag(2, 0);
    w.varint(value ? 1 : 0);
  } else if (typeof value === 'number') {
    if (Number.isInteger(value) && value >= -(2 ** 63) && value < 2 ** 63) {
      w.tag(3, 0);
      w.int64(value);
    } else {
      w.tag(4, 1);
      w.double(value);
    }
  } else if (value instanceof Uint8Array) {
    w.tag(7, 2);
    w.bytes(value);
  } else if (Array.isArray(value)) {
    w.tag(5, 2);
    const array = w.begin();
    for (const item of value) {
      w.tag(1, 2);
      const at = w.begin();
      writeAnyValue(w, item);
      w.end(at);
    }
    w.end(array);
  } else if (typeof value === 'object' && value !== null) {
    w.tag(6, 2);
    const list = w.begin();
    writeAttributes(w, value as Attributes, 1);
    w.end(list);
  }
}

/**
 * Encoded pieces that repeat from span to span: attribute keys (`KeyValue.key` with its tag) and
 * span names, which are few by design (a name is a route or a statement, never an id). Bounded.
 */
const CACHE_LIMIT = 1024;
const keyPieces = new Map<string, Uint8Array>();
const namePieces = new Map<string, Uint8Array>();

function piece(cache: Map<string, Uint8Array>, field: number, s: string): Uint8Array {
  let p = cache.get(s);
  if (!p) {
    const w = new ProtoWriter(s.length * 3 + 8);
    w.tag(field, 2);
    w.string(s);
    p = w.buf.slice(0, w.pos);
    if (cache.size >= CACHE_LIMIT) cache.clear();
    cache.set(s, p);
  }
  return p;
}

function writeAttributes(w: ProtoWriter, attributes: Attributes, field: number): void {
  for (const key in attributes) {
    if (!Object.hasOwn(attributes, key)) continue;
    w.tag(field, 2);
    const kv = w.begin();
    w.raw(piece(keyPieces, 1, key));
    w.tag(2, 2);
    const v = w.begin();
    writeAnyValue(w, attributes[key]);
    w.end(v);
    w.end(kv);
  }
}

/**
 * A span's attributes. A frozen set (a statement's: telemetry/tracing.ts) is the same object span
 * after span and cannot change, so it is encoded once.
 */
const frozenBlocks = new WeakMap<Attributes, Uint8Array>();

function writeSpanAttributes(w: ProtoWriter, attributes: Attributes): void {
  if (!Object.isFrozen(attributes)) {
    writeAttributes(w, attributes, 9);
    return;
  }
  let block = frozenBlocks.get(attributes);
  if (!block) {
    const b = new ProtoWriter(256);
    writeAttributes(b, attributes, 9);
    block = b.buf.slice(0, b.pos);
    frozenBlocks.set(attributes, block);
  }
  w.raw(block);
}

// Span: 1 trace_id, 2 span_id, 3 trace_state, 4 parent_span_id, 5 name, 6 kind, 7 start (fixed64),
// 8 end (fixed64), 9 attributes, 10 dropped_attributes_count, 11 events, 12 dropped_events_count,
// 13 links, 14 dropped_links_count, 15 status, 16 flags (fixed32).
// Event: 1 time (fixed64), 2 name, 3 attributes, 4 dropped_attributes_count.
// Link: 1 trace_id, 2 span_id, 3 trace_state, 4 attributes, 5 dropped_attributes_count, 6 flags.
// Status: 2 message, 3 code.
function writeSpan(w: ProtoWriter, s: FinishedSpan): void {
  w.tag(1, 2);
  w.hex(s.traceId);
  w.tag(2, 2);
  w.hex(s.spanId);
  const traceState = s.traceState?.serialize();
  if (traceState) {
    w.tag(3, 2);
    w.string(traceState);
  }
  if (s.parentSpanId) {
    w.tag(4, 2);
    w.hex(s.parentSpanId);
  }
  w.raw(piece(namePieces, 5, s.name));
  w.tag(6, 0);
  w.varint(s.kind + 1);
  w.tag(7, 1);
  w.fixed64(nanos(s.startTime));
  w.tag(8, 1);
  w.fixed64(nanos(s.endTime));
  writeSpanAttributes(w, s.attributes);
  w.tag(10, 0);
  w.varint(s.droppedAttributesCount);
  for (const e of s.events) writeEvent(w, e);
  w.tag(12, 0);
  w.varint(s.droppedEventsCount);
  for (const l of s.links) writeLink(w, l);
  w.tag(14, 0);
  w.varint(s.droppedLinksCount);
  w.tag(15, 2);
  const status = w.begin();
  if (s.statusMessage) {
    w.tag(2, 2);
    w.string(s.statusMessage);
  }
  w.tag(3, 0);
  w.varint(s.statusCode);
  w.end(status);
  w.tag(16, 5);
  w.fixed32(spanFlags(s.traceFlags, s.parentIsRemote));
}

function writeEvent(w: ProtoWriter, e: SpanEvent): void {
  w.tag(11, 2);
  const at = w.begin();
  w.tag(1, 1);
  w.fixed64(nanos(e.time));
  w.tag(2, 2);
  w.string(e.name);
  writeAttributes(w, e.attributes, 3);
  w.tag(4, 0);
  w.varint(e.droppedAttributesCount);
  w.end(at);
}

function writeLink(w: ProtoWriter, l: SpanLink): void {
  w.tag(13, 2);
  const at = w.begin();
  w.tag(1, 2);
  w.hex(l.context.traceId);
  w.tag(2, 2);
  w.hex(l.context.spanId);
  const traceState = l.context.traceState?.serialize();
  if (traceState) {
    w.tag(3, 2);
    w.string(traceState);
  }
  writeAttributes(w, l.attributes, 4);
  w.tag(5, 0);
  w.varint(0);
  w.tag(6, 5);
  w.fixed32(spanFlags(l.context.traceFlags, l.context.isRemote));
  w.end(at);
}

/** A field's bytes: `field` tag, length, body. */
function message(field: number, body: (w: ProtoWriter) => void): Uint8Array {
  const w = new ProtoWriter(256);
  w.tag(field, 2);
  const at = w.begin();
  body(w);
  w.end(at);
  return w.buf.slice(0, w.pos);
}

interface ScopeBuffer {
  /** ScopeSpans.scope (field 1), with its tag. */
  scope: Uint8Array;
  spans: ProtoWriter;
  count: number;
}

export class ProtobufSpanEncoder implements SpanEncoder {
  readonly contentType = 'application/x-protobuf';
  pending = 0;
  private readonly resource: Uint8Array;
  private readonly scopes = new Map<Scope, ScopeBuffer>();

  constructor(resource: Attributes) {
    // ResourceSpans.resource (field 1): Resource { 1: attributes, 2: dropped_attributes_count }.
    this.resource = message(1, (w) => {
      writeAttributes(w, resource, 1);
      w.tag(2, 0);
      w.varint(0);
    });
  }

  get pendingBytes(): number {
    let n = 0;
    for (const s of this.scopes.values()) n += s.spans.pos;
    return n;
  }

  add(span: FinishedSpan): void {
    let buffer = this.scopes.get(span.scope);
    if (!buffer) {
      const { name, version } = span.scope;
      buffer = {
        scope: message(1, (w) => {
          w.tag(1, 2);
          w.string(name);
          if (version) {
            w.tag(2, 2);
            w.string(version);
          }
        }),
        spans: new ProtoWriter(),
        count: 0,
      };
      this.scopes.set(span.scope, buffer);
    }
    const w = buffer.spans;
    w.tag(2, 2); // ScopeSpans.spans
    const at = w.begin();
    writeSpan(w, span);
    w.end(at);
    buffer.count++;
    this.pending++;
  }

  take(): EncodedBatch | undefined {
    if (this.pending === 0) return undefined;
    // ExportTraceServiceRequest { 1: ResourceSpans { 1: resource, 2: ScopeSpans { 1: scope, 2: spans } } }
    let inner = this.resource.length;
    const scopes: ScopeBuffer[] = [];
    for (const s of this.scopes.values()) {
      if (s.count === 0) continue;
      scopes.push(s);
      const len = s.scope.length + s.spans.pos;
      inner += 1 + varintSize(len) + len;
    }
    const w = new ProtoWriter(1 + varintSize(inner) + inner);
    w.tag(1, 2);
    w.varint(inner);
    w.buf.set(this.resource, w.pos);
    w.pos += this.resource.length;
    for (const s of scopes) {
      w.tag(2, 2);
      w.varint(s.scope.length + s.spans.pos);
      w.buf.set(s.scope, w.pos);
      w.pos += s.scope.length;
      w.buf.set(s.spans.buf.subarray(0, s.spans.pos), w.pos);
      w.pos += s.spans.pos;
      s.spans.reset();
      s.count = 0;
    }
    const out = batch(w.buf.subarray(0, w.pos), this.pending);
    this.pending = 0;
    return out;
  }
}
