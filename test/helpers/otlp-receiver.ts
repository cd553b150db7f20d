// A local OTLP/HTTP collector for tests: accepts traces and metrics (any path ending in /traces or /metrics) in http/protobuf and
// http/json, decodes the spans (a small protobuf wire-format reader, field numbers from
// opentelemetry-proto) and keeps the metric names. Loopback only.
import { type Server, createServer } from 'node:http';
import { gunzipSync } from 'node:zlib';

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
  resource: Record<string, unknown>;
}

export interface OtlpRequest {
  path: string;
  contentType: string;
  headers: Record<string, string | string[] | undefined>;
}

export interface OtlpReceiver {
  url: string;
  spans: ReceivedSpan[];
  /** Metric names in the order first seen (http/json only). */
  metricNames: Set<string>;
  requests: OtlpRequest[];
  /** Everything received, as text (protobuf bytes read as latin1): for "no secret anywhere" checks. */
  raw: string[];
  waitFor<T>(find: () => T | undefined, timeoutMs?: number): Promise<T>;
  close(): Promise<void>;
}

type Fields = Map<number, (bigint | Uint8Array)[]>;

function readVarint(buf: Uint8Array, pos: number): [bigint, number] {
  let result = 0n;
  let shift = 0n;
  for (;;) {
    const b = buf[pos++]!;
    result |= BigInt(b & 0x7f) << shift;
    if ((b & 0x80) === 0) return [result, pos];
    shift += 7n;
  }
}

/** One message's fields: varints and fixed numbers as bigint, length-delimited ones as bytes. */
function fields(buf: Uint8Array): Fields {
  const out: Fields = new Map();
  let pos = 0;
  while (pos < buf.length) {
    const [tag, p] = readVarint(buf, pos);
    pos = p;
    const no = Number(tag >> 3n);
    const wire = Number(tag & 7n);
    let value: bigint | Uint8Array;
    if (wire === 0) [value, pos] = readVarint(buf, pos);
    else if (wire === 1) {
      value = new DataView(buf.buffer, buf.byteOffset + pos, 8).getBigUint64(0, true);
      pos += 8;
    } else if (wire === 5) {
      value = BigInt(new DataView(buf.buffer, buf.byteOffset + pos, 4).getUint32(0, true));
      pos += 4;
    } else if (wire === 2) {
      const [len, q] = readVarint(buf, pos);
      value = buf.subarray(q, q + Number(len));
      pos = q + Number(len);
    } else throw new Error(`unsupported wire type ${wire}`);
    if (!out.has(no)) out.set(no, []);
    out.get(no)!.push(value);
  }
  return out;
}

const bytes = (f: Fields, no: number): Uint8Array[] => (f.get(no) ?? []) as Uint8Array[];
const str = (f: Fields, no: number): string => new TextDecoder().decode(bytes(f, no)[0] ?? new Uint8Array());
const hex = (f: Fields, no: number): string => Buffer.from(bytes(f, no)[0] ?? new Uint8Array()).toString('hex');

function anyValue(f: Fields): unknown {
  if (f.has(1)) return str(f, 1);
  if (f.has(2)) return (f.get(2)![0] as bigint) !== 0n;
  if (f.has(3)) return Number(BigInt.asIntN(64, f.get(3)![0] as bigint));
  if (f.has(4)) {
    const dv = new DataView(new ArrayBuffer(8));
    dv.setBigUint64(0, f.get(4)![0] as bigint, true);
    return dv.getFloat64(0, true);
  }
  if (f.has(5)) return bytes(fields(bytes(f, 5)[0]!), 1).map((v) => anyValue(fields(v)));
  return undefined;
}

function keyValues(list: Uint8Array[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const kv of list) {
    const f = fields(kv);
    out[str(f, 1)] = anyValue(fields(bytes(f, 2)[0] ?? new Uint8Array()));
  }
  return out;
}

/** ExportTraceServiceRequest (protobuf) → spans. */
export function decodeTraceProto(body: Uint8Array): ReceivedSpan[] {
  const spans: ReceivedSpan[] = [];
  for (const rs of bytes(fields(body), 1)) {
    const rsf = fields(rs);
    const resource = keyValues(bytes(fields(bytes(rsf, 1)[0] ?? new Uint8Array()), 1));
    for (const ss of bytes(rsf, 2)) {
      for (const s of bytes(fields(ss), 2)) {
        const f = fields(s);
        spans.push({
          traceId: hex(f, 1),
          spanId: hex(f, 2),
          parentSpanId: hex(f, 4),
          name: str(f, 5),
          kind: Number((f.get(6)?.[0] as bigint | undefined) ?? 0n),
          attributes: keyValues(bytes(f, 9)),
          resource,
        });
      }
    }
  }
  return spans;
}

type JsonAny = {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: string | number;
  doubleValue?: number;
  arrayValue?: { values?: JsonAny[] };
};
type JsonKv = { key: string; value: JsonAny };

function jsonValue(v: JsonAny): unknown {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.arrayValue) return (v.arrayValue.values ?? []).map(jsonValue);
  return undefined;
}

const jsonKvs = (list: JsonKv[] | undefined) =>
  Object.fromEntries((list ?? []).map((kv) => [kv.key, jsonValue(kv.value)]));

/** ExportTraceServiceRequest (OTLP/JSON: ids in hex) → spans. */
export function decodeTraceJson(body: string): ReceivedSpan[] {
  const doc = JSON.parse(body) as {
    resourceSpans?: { resource?: { attributes?: JsonKv[] }; scopeSpans?: { spans?: Record<string, unknown>[] }[] }[];
  };
  const spans: ReceivedSpan[] = [];
  for (const rs of doc.resourceSpans ?? []) {
    const resource = jsonKvs(rs.resource?.attributes);
    for (const ss of rs.scopeSpans ?? []) {
      for (const s of ss.spans ?? []) {
        spans.push({
          traceId: String(s.traceId),
          spanId: String(s.spanId),
          parentSpanId: String(s.parentSpanId ?? ''),
          name: String(s.name),
          kind: Number(s.kind),
          attributes: jsonKvs(s.attributes as JsonKv[]),
          resource,
        });
      }
    }
  }
  return spans;
}

/** `delayMs`: each answer waits that long (a slow collector). A gzip body is unzipped first. */
export async function startOtlpReceiver(opts: { delayMs?: number } = {}): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const metricNames = new Set<string>();
  const requests: OtlpRequest[] = [];
  const raw: string[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const sent = Buffer.concat(chunks);
      const body = req.headers['content-encoding'] === 'gzip' ? gunzipSync(sent) : sent;
      const contentType = req.headers['content-type'] ?? '';
      const path = req.url ?? '';
      requests.push({ path, contentType, headers: req.headers });
      raw.push(body.toString('latin1'));
      const json = contentType.includes('json');
      if (path.endsWith('/traces'))
        spans.push(...(json ? decodeTraceJson(body.toString('utf8')) : decodeTraceProto(new Uint8Array(body))));
      if (path.endsWith('/metrics') && json) {
        const doc = JSON.parse(body.toString('utf8')) as {
          resourceMetrics?: { scopeMetrics?: { metrics?: { name: string }[] }[] }[];
        };
        for (const rm of doc.resourceMetrics ?? [])
          for (const sm of rm.scopeMetrics ?? []) for (const m of sm.metrics ?? []) metricNames.add(m.name);
      }
      setTimeout(() => {
        res.writeHead(200, { 'content-type': json ? 'application/json' : 'application/x-protobuf' });
        res.end(json ? '{}' : '');
      }, opts.delayMs ?? 0);
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    metricNames,
    requests,
    raw,
    async waitFor(find, timeoutMs = 15_000) {
      const until = Date.now() + timeoutMs;
      for (;;) {
        const found = find();
        if (found !== undefined && found !== false) return found;
        if (Date.now() > until)
          throw new Error(`not received within ${timeoutMs} ms; spans: ${spans.map((s) => s.name).join(', ')}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}

/** Prometheus text format → `name{label="v",…}` → value (labels sorted, otel_scope_name left out). */
export function parsePrometheus(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line);
    if (!m) continue;
    const labels = [...(m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)]
      .filter(([, k]) => k !== 'otel_scope_name')
      .map(([, k, v]) => `${k}="${v}"`)
      .sort();
    out.set(labels.length ? `${m[1]}{${labels.join(',')}}` : m[1]!, Number(m[3]));
  }
  return out;
}
