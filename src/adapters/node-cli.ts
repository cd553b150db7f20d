// `authsvc [serve|migrate|version|admin]` on Node (bin/authsvc.js): the shared commands over node:http.
import { runCli } from './cli-shared.ts';
import { startServer } from './node.ts';

runCli(process.argv.slice(2), { name: `node ${process.version}`, listen: startServer });
