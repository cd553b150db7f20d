// Vitest global setup: the tests that start the real server run bin/authsvc.js, which runs
// dist/node and never builds it (a start writes nothing into the package). Build it here, once
// per run, when a source is newer than the last build.
// @ts-expect-error plain JavaScript module without types
import { buildNode, isFresh } from '../../scripts/build-node.mjs';

export default async function buildDist(): Promise<void> {
  if (!(isFresh() as boolean)) await (buildNode() as Promise<void>);
}
