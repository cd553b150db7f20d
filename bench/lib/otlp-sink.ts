// `--tracing`: a local OTLP/HTTP collector for authsvc's spans. It answers each export at once,
// counts the spans of each body with a shallow scan (the Span messages are skipped, not decoded)
// and keeps nothing: a real collector runs elsewhere, and this one shares its process, and the
// machine's two cores, with the load generator, so it must cost as little as it can.
import { createServer } from 'node:http';

export interface OtlpSink {
  url: string;
  /** Exports received, their bytes and spans so far. */
  stats(): { exports: number; bytes: number; spans: number };
  close(): Promise<void>;
}

function varint(buf: Uint8Array, pos: number): [number, number] {
  let v = 0;
  let mul = 1;
  for (;;) {
    const b = buf[pos++]!;
    v += (b & 0x7f) * mul;
    if (b < 0x80) return [v, pos];
    mul *= 128;
  }
}

/** Calls `each(field, start, end)` for each length-delimited field of the message in buf[start, end). */
function lengthFields(
  buf: Uint8Array,
  start: number,
  end: number,
  each: (field: number, s: number, e: number) => void,
): void {
  let pos = start;
  while (pos < end) {
    const [tag, p] = varint(buf, pos);
    pos = p;
    const wire = tag & 7;
    if (wire === 0) [, pos] = varint(buf, pos);
    else if (wire === 1) pos += 8;
    else if (wire === 5) pos += 4;
    else if (wire === 2) {
      const [len, q] = varint(buf, pos);
      each(Math.floor(tag / 8), q, q + len);
      pos = q + len;
    } else throw new Error(`unsupported wire type ${wire}`);
  }
}

/** Spans in an ExportTraceServiceRequest: resource_spans (1) > scope_spans (2) > spans (2). */
export function countSpans(body: Uint8Array): number {
  let n = 0;
  lengthFields(body, 0, body.length, (f, s, e) => {
    if (f !== 1) return;
    lengthFields(body, s, e, (f2, s2, e2) => {
      if (f2 !== 2) return;
      lengthFields(body, s2, e2, (f3) => {
        if (f3 === 2) n++;
      });
    });
  });
  return n;
}

export async function startOtlpSink(): Promise<OtlpSink> {
  let exports = 0;
  let bytes = 0;
  let spans = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      exports++;
      bytes += body.length;
      spans += countSpans(body);
      res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const addr = server.address();
  return {
    url: `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`,
    stats: () => ({ exports, bytes, spans }),
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}
