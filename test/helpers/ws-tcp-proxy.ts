// A minimal stand-in for neon's wsproxy: each WebSocket to `/v2?address=<host>:<port>` becomes a
// TCP connection to that address, and binary messages are forwarded both ways unchanged (the
// Postgres wire protocol rides inside). Only addresses in `allow` are reached, so the test proxy
// is no open relay. Plain ws:, for tests on this machine only.
import { type AddressInfo, type Socket, connect } from 'node:net';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';

export interface WsTcpProxy {
  port: number;
  /** For AUTHSVC_DB_WS_PROXY / neonConfig.wsProxy: host:port/v2, no protocol. */
  address: string;
  /** Connections accepted so far (each database connection of the Worker is one). */
  connections: number;
  close(): Promise<void>;
}

function toBuffer(data: RawData): Buffer {
  if (Buffer.isBuffer(data)) return data;
  if (Array.isArray(data)) return Buffer.concat(data);
  return Buffer.from(data);
}

export async function startWsTcpProxy(opts: { allow: string[] }): Promise<WsTcpProxy> {
  const allow = new Set(opts.allow);
  const sockets = new Set<Socket>();
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, path: '/v2' });
  const proxy: WsTcpProxy = { port: 0, address: '', connections: 0, close };

  wss.on('connection', (ws: WebSocket, req) => {
    const target = new URL(req.url ?? '/', 'http://proxy').searchParams.get('address') ?? '';
    const m = /^(.+):(\d+)$/.exec(target);
    if (!m || !allow.has(target)) {
      ws.close(1008, `address not allowed: ${target}`);
      return;
    }
    proxy.connections++;
    const tcp = connect(Number(m[2]), m[1] ?? '');
    sockets.add(tcp);
    // Messages may arrive before the TCP connection is up; net.Socket buffers writes until then.
    ws.on('message', (data) => tcp.write(toBuffer(data)));
    ws.on('close', () => tcp.end());
    ws.on('error', () => tcp.destroy());
    tcp.on('data', (chunk) => {
      if (ws.readyState === ws.OPEN) ws.send(chunk, { binary: true });
    });
    tcp.on('close', () => {
      sockets.delete(tcp);
      if (ws.readyState === ws.OPEN || ws.readyState === ws.CONNECTING) ws.close();
    });
    tcp.on('error', () => ws.terminate());
  });

  await new Promise<void>((done, fail) => {
    wss.once('listening', done);
    wss.once('error', fail);
  });
  proxy.port = (wss.address() as AddressInfo).port;
  proxy.address = `127.0.0.1:${proxy.port}/v2`;

  function close(): Promise<void> {
    for (const ws of wss.clients) ws.terminate();
    for (const s of sockets) s.destroy();
    return new Promise((done) => wss.close(() => done()));
  }
  return proxy;
}
