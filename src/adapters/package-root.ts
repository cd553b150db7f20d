// The package's own directory (where package.json, migrations/ and the PGlite worker live),
// found from this module upwards: the same answer whether the sources run through tsx or the
// compiled bundle in dist/node runs (whose chunks sit at another depth).
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

function findRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'migrations'))) return dir;
    const up = dirname(dir);
    if (up === dir)
      throw new Error(`authsvc: cannot find the package directory above ${fileURLToPath(import.meta.url)}`);
    dir = up;
  }
}

export const PACKAGE_ROOT = findRoot();
