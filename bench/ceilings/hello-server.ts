// HTTP ceiling: a hello-JSON route through Hono on the same Node adapter authsvc uses
// (@hono/node-server). env PORT; prints `listening <port>`; SIGTERM/SIGINT stop it.
import { serve } from '@hono/node-server';
import { Hono } from 'hono';

const app = new Hono();
app.get('/hello', (c) => c.json({ hello: 'world' }));

const server = serve({ fetch: app.fetch, port: Number(process.env.PORT ?? '0'), hostname: '127.0.0.1' }, (info) => {
  process.stdout.write(`listening ${info.port}\n`);
});
const stop = () => {
  (server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
  server.close(() => process.exit(0));
  setTimeout(() => process.exit(0), 2_000).unref();
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
