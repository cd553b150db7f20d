// Memory floors for `npm run bench -- --footprint` (issue 45): how small a Node server can sit
// idle before any of authsvc's own code is loaded, started with `npm start`'s Node flags and
// measured as authsvc is (resident memory 3 s after the first GET /health 200).
//   node bench/ceilings/floor-server.cjs bare   node:http only (no WHATWG fetch classes)
//   node bench/ceilings/floor-server.cjs web    + Request/Response (Node loads undici for them;
//                                               Hono, and so authsvc, needs them on every runtime)
//   node bench/ceilings/floor-server.cjs hono   + a Hono app on @hono/node-server answering /health
//                                               (the HTTP layer authsvc is built on)
// authsvc's other packages are not loaded here: unbundled, whole packages (all of zod, drizzle's
// index) sit far above what the tree-shaken bundle holds (102 MB measured), so that would be no
// floor. env PORT. CommonJS so that `bare` loads no ES module loader; hono is imported.
const http = require('node:http');

const port = Number(process.env.PORT ?? '0');
const variant = process.argv[2] ?? 'bare';

async function main() {
  if (variant === 'bare' || variant === 'web') {
    if (variant === 'web') void [globalThis.Request, globalThis.Response, globalThis.Headers];
    http
      .createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'))
      .listen(port, '127.0.0.1');
    return;
  }
  const [{ Hono }, { serve }] = await Promise.all([import('hono'), import('@hono/node-server')]);
  const app = new Hono();
  app.get('/health', (c) => c.json({ name: 'floor' }));
  serve({ fetch: app.fetch, port, hostname: '127.0.0.1' });
}

main().catch((err) => {
  process.stderr.write(`${err}\n`);
  process.exit(1);
});
