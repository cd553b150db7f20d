#!/usr/bin/env node
// Runs the compiled server in dist/node; stack traces name the .ts lines (source maps read when a
// stack is first printed: scripts/stack-traces.mjs).
// Starting never writes into the package directory (a read-only root file system, a package
// installed by another user): dist/node is built when the package is installed (`prepare`, run
// by `npm ci` / `npm install` in a clone) or by `npm run build`, never here.
import { existsSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { ENTRY, OUT, ROOT, isFresh } from '../scripts/build-node.mjs';
import { startWithMallocTrim } from '../scripts/malloc-trim.mjs';
import { installStackMapping } from '../scripts/stack-traces.mjs';

startWithMallocTrim(); // on glibc: starts again at once with malloc's trim threshold fixed (scripts/malloc-trim.mjs)

if (!existsSync(ENTRY)) {
  process.stderr.write(
    `authsvc: ${ENTRY} is missing: this copy of authsvc has not been built.\n` +
      `Run \`npm run build\` in ${ROOT} (it needs the dev dependencies: \`npm ci\` installs them and builds).\n`,
  );
  process.exit(1);
}
if (!isFresh()) {
  process.stderr.write(
    `authsvc: dist/node is older than the sources under ${ROOT}: running the old build; \`npm run build\` brings it up to date.\n`,
  );
}
installStackMapping(OUT);
await import(pathToFileURL(ENTRY).href);
