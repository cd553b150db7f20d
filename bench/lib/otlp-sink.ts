// `--tracing`: a local OTLP/HTTP collector for authsvc's spans. It answers each export at once and
// keeps the bodies; spans are counted after the run (decoding under load would take CPU from the
// load generator, which shares this process).
import { createServer } from 'node:http';
import { decodeTraceProto } from '../../test/helpers/otlp-receiver.ts';

export interface OtlpSink {
  url: string;
  /** Exports received, their bytes and spans so far. */
  stats(): { exports: number; bytes: number; spans: number };
  close(): Promise<void>;
}

export async function startOtlpSink(): Promise<OtlpSink> {
  const bodies: Buffer[] = [];
  let counted = 0;
  let spans = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      bodies.push(Buffer.concat(chunks));
      res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const addr = server.address();
  return {
    url: `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`,
    stats() {
      for (; counted < bodies.length; counted++) spans += decodeTraceProto(new Uint8Array(bodies[counted]!)).length;
      return { exports: bodies.length, bytes: bodies.reduce((n, b) => n + b.length, 0), spans };
    },
    close: () => new Promise<void>((done) => { server.closeAllConnections(); server.close(() => done()); }),
  };
}
