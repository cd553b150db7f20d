#!/usr/bin/env node
// Runs the compiled server in dist/node (built by scripts/build-node.mjs, with source maps), so a
// start loads plain JavaScript: no TypeScript compiler in memory, no per-start transform. The
// build happens here when dist/node is missing or older than a source file (about 100 ms); where
// esbuild is not installed, the sources run through tsx instead.
import { buildNode, ENTRY, isFresh } from '../scripts/build-node.mjs';
import { pathToFileURL } from 'node:url';

process.setSourceMapsEnabled(true);
let compiled = isFresh();
if (!compiled) {
  try {
    await buildNode();
    compiled = true;
  } catch (err) {
    if (err?.code !== 'ERR_MODULE_NOT_FOUND') throw err;
  }
}
if (compiled) {
  await import(pathToFileURL(ENTRY).href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/adapters/node-cli.ts');
}
