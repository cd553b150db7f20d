// Loader hooks for record-modules.mjs (they run on the loader thread: write straight to fd 2).
import { writeSync } from 'node:fs';

export async function load(url, context, next) {
  writeSync(2, `module-loaded ${url}\n`);
  return next(url, context);
}
