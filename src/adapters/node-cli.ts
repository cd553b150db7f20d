// `authsvc [serve|migrate|version|admin]` on Node (bin/authsvc.js): the shared commands over node:http.
import { runCli } from './cli-shared.ts';
import { startServer } from './node.ts';
import { collectStartupGarbage } from './startup-gc.ts';

runCli(process.argv.slice(2), {
  name: `node ${process.version}`,
  listen: async (deps) => {
    const server = await startServer(deps);
    collectStartupGarbage();
    return server;
  },
});
