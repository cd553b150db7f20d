// A TCP proxy between the server and Postgres that reads the frontend half of the wire protocol
// and counts what the server sends: statements executed (simple Query 'Q' + extended Execute 'E'),
// round trips (Sync 'S' + 'Q': the server waits for an answer after each), Parse messages (a
// statement planned again: unnamed statements are parsed on every use), per SQL text.
// Used by `npm run bench -- --count-queries` (it adds a hop, so timings taken with it are not
// the benchmark's numbers).
import { type Server, type Socket, connect, createServer } from 'node:net';

export interface PgCounts {
  statements: number;
  roundTrips: number;
  parses: number;
  /** Executions per SQL text (whitespace collapsed, schema name replaced by <ns>). */
  bySql: Map<string, number>;
}

export interface PgCountProxy {
  port: number;
  reset(): void;
  snapshot(): PgCounts;
  close(): Promise<void>;
}

function emptyCounts(): PgCounts {
  return { statements: 0, roundTrips: 0, parses: 0, bySql: new Map() };
}

function cstring(buf: Buffer, at: number): [string, number] {
  const end = buf.indexOf(0, at);
  return [buf.toString('utf8', at, end), end + 1];
}

export async function startPgCountProxy(
  target: { host: string; port: number },
  namespace: string,
): Promise<PgCountProxy> {
  let counts = emptyCounts();
  const sockets = new Set<Socket>();
  const norm = (sql: string) => sql.replace(/\s+/g, ' ').replaceAll(`"${namespace}"`, '<ns>').trim().slice(0, 160);
  const bump = (sql: string) => counts.bySql.set(sql, (counts.bySql.get(sql) ?? 0) + 1);

  const server: Server = createServer((client) => {
    const upstream = connect(target.port, target.host);
    sockets.add(client);
    sockets.add(upstream);
    let buf = Buffer.alloc(0);
    let startup = true;
    const named = new Map<string, string>();
    let unnamed = '';
    let bound = '';
    client.on('data', (chunk: Buffer) => {
      upstream.write(chunk);
      buf = Buffer.concat([buf, chunk]);
      for (;;) {
        if (startup) {
          if (buf.length < 4) break;
          const len = buf.readInt32BE(0);
          if (buf.length < len) break;
          const code = buf.readInt32BE(4);
          buf = buf.subarray(len);
          // SSLRequest / GSSENCRequest are followed by another start-up packet.
          if (code !== 80877103 && code !== 80877104) startup = false;
          continue;
        }
        if (buf.length < 5) break;
        const type = String.fromCharCode(buf[0]!);
        const len = buf.readInt32BE(1);
        if (buf.length < 1 + len) break;
        const body = buf.subarray(5, 1 + len);
        buf = buf.subarray(1 + len);
        if (type === 'Q') {
          counts.statements++;
          counts.roundTrips++;
          bump(norm(cstring(body, 0)[0]));
        } else if (type === 'P') {
          counts.parses++;
          const [name, at] = cstring(body, 0);
          const sql = norm(cstring(body, at)[0]);
          if (name) named.set(name, sql);
          else unnamed = sql;
        } else if (type === 'B') {
          const [, at] = cstring(body, 0);
          const stmt = cstring(body, at)[0];
          bound = stmt ? (named.get(stmt) ?? stmt) : unnamed;
        } else if (type === 'E') {
          counts.statements++;
          bump(bound);
        } else if (type === 'S') {
          counts.roundTrips++;
        }
      }
    });
    upstream.on('data', (chunk: Buffer) => client.write(chunk));
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('close', end);
    upstream.on('close', end);
    client.on('error', end);
    upstream.on('error', end);
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : 0;
  return {
    port,
    reset() {
      counts = emptyCounts();
    },
    snapshot() {
      return counts;
    },
    close() {
      for (const s of sockets) s.destroy();
      return new Promise((done) => server.close(() => done()));
    },
  };
}
