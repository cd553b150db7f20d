// Deno adapter: `deno run <permissions> src/adapters/deno.ts [serve|migrate|version]` (npm run
// start:deno). Config, `.env`, database (PGlite or node-postgres), mailer and the native hasher are
// the Node adapter's, which Deno 2 runs from package.json/node_modules; only the HTTP server and
// signal handling are Deno's own.
import { createApp } from '../app.ts';
import type { Deps } from '../deps.ts';
import { type Listening, bindServer, runCli } from './cli-shared.ts';

// The little of Deno's API used here (no Deno types in this project).
type DenoSignal = 'SIGTERM' | 'SIGINT';
interface DenoNetAddr {
  transport: string;
  hostname: string;
  port: number;
}
interface DenoHttpServer {
  addr: DenoNetAddr;
  shutdown(): Promise<void>;
}
interface DenoServeOptions {
  port: number;
  hostname: string;
  onListen(addr: DenoNetAddr): void;
}
declare const Deno: {
  args: string[];
  version: { deno: string };
  serve(
    opts: DenoServeOptions,
    handler: (req: Request, info: { remoteAddr: DenoNetAddr }) => Response | Promise<Response>,
  ): DenoHttpServer;
  addSignalListener(signal: DenoSignal, handler: () => void): void;
  removeSignalListener(signal: DenoSignal, handler: () => void): void;
};

/** Grace for in-flight requests after SIGTERM; then the process exits regardless (as on Node). */
const FORCE_CLOSE_MS = 30_000;

async function listen(deps: Deps): Promise<Listening> {
  const app = createApp(deps);
  const { host, port } = deps.config.api;
  // Requests whose handler has not answered yet (see stop()).
  let inFlight = 0;
  let drained: (() => void) | undefined;
  const server = bindServer(host, port, (hostname) =>
    Deno.serve(
      // onListen replaces Deno's own "Listening on …" line, which would break the JSON log.
      { port, hostname, onListen: () => undefined },
      async (req, info) => {
        inFlight++;
        try {
          // The socket peer goes where src/http/request-meta.ts looks for it.
          return await app.fetch(req, { remoteAddr: info.remoteAddr.hostname });
        } finally {
          if (--inFlight === 0) drained?.();
        }
      },
    ),
  );
  let stopping: Promise<void> | undefined;
  return {
    port: server.addr.port,
    stop() {
      stopping ??= (async () => {
        let timer: ReturnType<typeof setTimeout> | undefined;
        const deadline = new Promise<void>((r) => {
          timer = setTimeout(r, FORCE_CLOSE_MS);
        });
        try {
          // Deno 2.9's shutdown() makes every request body not yet read unreadable
          // (denoland/deno#36809: a 500 for a request in flight), so the handlers finish first;
          // the listener stays open meanwhile, usually for milliseconds.
          if (inFlight > 0)
            await Promise.race([
              new Promise<void>((r) => {
                drained = r;
              }),
              deadline,
            ]);
          // No new connections, idle keep-alive ones closed, responses being written finish.
          await Promise.race([server.shutdown(), deadline]);
        } finally {
          clearTimeout(timer);
          await deps.db.close();
        }
      })();
      return stopping;
    },
  };
}

function stopSignal(): Promise<string> {
  return new Promise((resolveSignal) => {
    const signals: DenoSignal[] = ['SIGTERM', 'SIGINT'];
    const handlers = signals.map((signal) => {
      const handler = () => {
        // Once: a second signal gets Deno's default (terminate), as on Node.
        signals.forEach((s, i) => {
          Deno.removeSignalListener(s, handlers[i]!);
        });
        resolveSignal(signal);
      };
      Deno.addSignalListener(signal, handler);
      return handler;
    });
  });
}

if (typeof Deno === 'undefined') {
  process.stderr.write(
    'authsvc: src/adapters/deno.ts runs under Deno (deno run … src/adapters/deno.ts); on Node use bin/authsvc.js.\n',
  );
  process.exit(1);
}
runCli(Deno.args, { name: `deno ${Deno.version.deno}`, listen, stopSignal });
