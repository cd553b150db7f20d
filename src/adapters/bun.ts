// Bun adapter: `bun src/adapters/bun.ts [serve|migrate|version]` (npm run start:bun). Config, `.env`,
// database (PGlite or node-postgres), mailer and the native hasher are the Node adapter's, which Bun
// runs as is; only the HTTP server is Bun's own. Signals arrive through Bun's `process`.
import { createApp } from '../app.ts';
import type { Deps } from '../deps.ts';
import { type Listening, bindServer, runCli } from './cli-shared.ts';

// The little of Bun's API used here (no bun-types dependency).
interface BunServer {
  port: number;
  stop(closeActiveConnections?: boolean): Promise<void>;
  requestIP(req: Request): { address: string } | null;
}
interface BunServeOptions {
  port: number;
  hostname: string;
  fetch(req: Request, server: BunServer): Response | Promise<Response>;
}
declare const Bun: { version: string; serve(opts: BunServeOptions): BunServer };

/** Grace for in-flight requests after SIGTERM before their connections are cut (as on Node). */
const FORCE_CLOSE_MS = 30_000;

async function listen(deps: Deps): Promise<Listening> {
  const app = createApp(deps);
  const { host, port } = deps.config.api;
  const server = bindServer(host, port, (hostname) =>
    Bun.serve({
      port,
      hostname,
      // The socket peer goes where src/http/request-meta.ts looks for it.
      fetch: (req, srv) => app.fetch(req, { remoteAddr: srv.requestIP(req)?.address }),
    }),
  );
  let stopping: Promise<void> | undefined;
  return {
    port: server.port,
    stop() {
      // No new connections; idle keep-alive ones close now, busy ones after their response; the
      // promise resolves once every connection is closed. Then the database.
      stopping ??= (async () => {
        const force = setTimeout(() => void server.stop(true), FORCE_CLOSE_MS);
        try {
          await server.stop();
        } finally {
          clearTimeout(force);
          await deps.db.close();
        }
      })();
      return stopping;
    },
  };
}

if (typeof Bun === 'undefined') {
  process.stderr.write(
    'authsvc: src/adapters/bun.ts runs under Bun (bun src/adapters/bun.ts); on Node use bin/authsvc.js.\n',
  );
  process.exit(1);
}
runCli(process.argv.slice(2), { name: `bun ${Bun.version}`, listen });
