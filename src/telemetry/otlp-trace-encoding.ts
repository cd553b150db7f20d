// Finished spans encoded as OTLP the moment they end (span-recorder.ts hands them over), so a
// span object dies young and a batch waiting for export is one growing byte buffer per
// instrumentation scope. `take()` wraps what is pending in an ExportTraceServiceRequest.
//
// http/protobuf: field numbers from opentelemetry-proto (trace/v1/trace.proto, common/v1,
// resource/v1); the output is byte for byte what the SDK's ProtobufTraceSerializer writes for
// the same spans (otlp-trace-encoding.test.ts checks it). http/json: OTLP/JSON as the SDK's
// JsonTraceSerializer writes it: hex ids, nanosecond timestamps as decimal strings.
import type { Attributes, AttributeValue } from '@opentelemetry/api';
import type { FinishedSpan, Scope, SpanEvent, SpanLink } from './span-recorder.ts';

export type OtlpProtocol = 'http/protobuf' | 'http/json';

export interface EncodedBatch {
  /** The request body: an ExportTraceServiceRequest. */
  body: Uint8Array;
  /** How many spans it holds (the SDK's exporter metrics read `length`). */
  length: number;
}

/** A batch; in a diagnostic log line (DEBUG=true) its size, not its bytes. */
function batch(body: Uint8Array, length: number): EncodedBatch {
  return { body, length, toJSON: () => ({ spans: length, bytes: body.length }) } as EncodedBatch;
}

export interface SpanEncoder {
  readonly contentType: string;
  /** Spans encoded and not yet taken. */
  readonly pending: number;
  /** Bytes encoded and not yet taken. */
  readonly pendingBytes: number;
  add(span: FinishedSpan): void;
  /** Everything pending as one request; undefined when nothing is. */
  take(): EncodedBatch | undefined;
}

// The OTLP span flags: the W3C trace flags plus "whether the parent is remote is known" (0x100)
// and "the parent is remote" (0x200), as the SDK sets them.
function spanFlags(traceFlags: number, parentIsRemote: boolean | undefined): number {
  return (traceFlags & 0xff) | 0x100 | (parentIsRemote ? 0x200 : 0);
}

/** Epoch milliseconds as nanoseconds (what OTLP's fixed64 timestamps hold). */
function nanos(ms: number): bigint {
  const whole = Math.floor(ms);
  return BigInt(whole) * 1_000_000n + BigInt(Math.trunc((ms - whole) * 1e6));
}

const utf8 = new TextEncoder();

/** A protobuf writer over one growing buffer. */
class ProtoWriter {
  buf: Uint8Array;
  view: DataView;
  pos = 0;

  constructor(size = 4096) {
    this.buf = new Uint8Array(size);
    this.view = new DataView(this.buf.buffer);
  }

  reserve(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.pos + n) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.pos));
    this.buf = next;
    this.view = new DataView(next.buffer);
  }

  /** A non-negative integer up to 2^53. */
  varint(v: number): void {
    this.reserve(10);
    const buf = this.buf;
    while (v > 0x7f) {
      buf[this.pos++] = (v & 0x7f) | 0x80;
      v = Math.floor(v / 128);
    }
    buf[this.pos++] = v;
  }

  /** An int64 varint: negatives as ten bytes of two's complement. */
  int64(v: number): void {
    if (v >= 0 && v <= Number.MAX_SAFE_INTEGER) return this.varint(v);
    let u = BigInt.asUintN(64, BigInt(v));
    this.reserve(10);
    while (u > 0x7fn) {
      this.buf[this.pos++] = Number(u & 0x7fn) | 0x80;
      u >>= 7n;
    }
    this.buf[this.pos++] = Number(u);
  }

  tag(field: number, wire: number): void {
    this.varint((field << 3) | wire);
  }

  fixed32(v: number): void {
    this.reserve(4);
    this.view.setUint32(this.pos, v >>> 0, true);
    this.pos += 4;
  }

  fixed64(v: bigint): void {
    this.reserve(8);
    this.view.setBigUint64(this.pos, v, true);
    this.pos += 8;
  }

  double(v: number): void {
    this.reserve(8);
    this.view.setFloat64(this.pos, v, true);
    this.pos += 8;
  }

  /** A length-prefixed UTF-8 string (ASCII in one pass; anything else through TextEncoder). */
  string(s: string): void {
    const n = s.length;
    if (n < 0x80) {
      this.reserve(n + 1);
      const buf = this.buf;
      const start = this.pos;
      buf[start] = n;
      let p = start + 1;
      for (let i = 0; i < n; i++) {
        const c = s.charCodeAt(i);
        if (c > 0x7f) return this.bytes(utf8.encode(s));
        buf[p++] = c;
      }
      this.pos = p;
      return;
    }
    const bytes = utf8.encode(s);
    this.bytes(bytes);
  }

  /** Bytes as they are (an encoded piece: tag, length and body). */
  raw(b: Uint8Array): void {
    const n = b.length;
    this.reserve(n);
    const buf = this.buf;
    let p = this.pos;
    if (n > 64) buf.set(b, p);
    else for (let i = 0; i < n; i++) buf[p + i] = b[i]!;
    this.pos = p + n;
  }

  bytes(b: Uint8Array): void {
    this.varint(b.length);
    this.reserve(b.length);
    this.buf.set(b, this.pos);
    this.pos += b.length;
  }

  /** A hex id as length-prefixed bytes. */
  hex(h: string): void {
    const n = h.length >> 1;
    this.varint(n);
    this.reserve(n);
    for (let i = 0; i < n; i++) this.buf[this.pos++] = (nibble(h.charCodeAt(2 * i)) << 4) | nibble(h.charCodeAt(2 * i + 1));
  }

  /** Starts a length-delimited field's body; `end(start)` writes its length in front of it. */
  begin(): number {
    this.reserve(1);
    this.pos++;
    return this.pos;
  }

  end(start: number): void {
    const len = this.pos - start;
    if (len < 0x80) {
      this.buf[start - 1] = len;
      return;
    }
    const size = varintSize(len);
    this.reserve(size - 1);
    this.buf.copyWithin(start + size - 1, start, this.pos);
    this.pos += size - 1;
    let p = start - 1;
    let v = len;
    while (v > 0x7f) {
      this.buf[p++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    this.buf[p] = v;
  }

  /** Drops what was written, keeping the buffer (up to a size). */
  reset(): void {
    this.pos = 0;
    if (this.buf.length > 1 << 20) {
      this.buf = new Uint8Array(4096);
      this.view = new DataView(this.buf.buffer);
    }
  }
}

function nibble(c: number): number {
  return c <= 0x39 ? c - 0x30 : (c | 0x20) - 0x57;
}

function varintSize(v: number): number {
  let n = 1;
  while (v > 0x7f) {
    v = Math.floor(v / 128);
    n++;
  }
  return n;
}

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
  if (!Object.isFrozen(attributes)) return writeAttributes(w, attributes, 9);
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

class ProtobufSpanEncoder implements SpanEncoder {
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

class JsonSpanEncoder implements SpanEncoder {
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

export function spanEncoder(protocol: OtlpProtocol, resource: Attributes): SpanEncoder {
  return protocol === 'http/json' ? new JsonSpanEncoder(resource) : new ProtobufSpanEncoder(resource);
}
