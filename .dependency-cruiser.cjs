// The import rules of src/ (docs/architecture.md), checked by dependency-cruiser in `npm test`
// (`npm run check:imports`). The layers run from the bottom up: a module may import its own
// folder and any layer below its own, never one above, and the feature rooms (one layer) never
// import each other. A folder under src/ that no layer names fails the check, so a new room
// needs a line here. Outside src/adapters/ nothing imports Node, Workers, Bun or Deno.
const { LAYERS } = require('./scripts/import-layers.cjs');

const esc = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** A path pattern for rooms: a folder `src/x/` or a root file `src/x.ts`. */
const pathOf = (rooms) => `^src/(${rooms.map((r) => (r.endsWith('.ts') ? `${esc(r)}$` : `${esc(r)}/`)).join('|')})`;

const forbidden = [
  {
    name: 'no-circular',
    comment: 'No import circle, type-only imports included.',
    severity: 'error',
    from: { path: '^src/' },
    to: { circular: true },
  },
  {
    name: 'runtime-neutral',
    comment: 'Node built-ins (node:* or bare), cloudflare:*, Bun and Deno only under src/adapters/.',
    severity: 'error',
    from: { path: '^src/', pathNot: '^src/adapters/' },
    to: { dependencyTypes: ['core'] },
  },
  {
    name: 'runtime-neutral-modules',
    comment: 'cloudflare:*, bun:* and Deno modules only under src/adapters/.',
    severity: 'error',
    from: { path: '^src/', pathNot: '^src/adapters/' },
    to: { path: '^(cloudflare:|bun$|bun:|deno$|jsr:|npm:)' },
  },
  {
    name: 'in-a-layer',
    comment: 'Every file under src/ belongs to a layer of .dependency-cruiser.cjs (a new folder needs its line).',
    severity: 'error',
    from: { path: '^src/', pathNot: pathOf(LAYERS.flatMap((l) => l.rooms)) },
    to: {},
  },
];

LAYERS.forEach((layer, i) => {
  const above = LAYERS.slice(i + 1).flatMap((l) => l.rooms);
  if (above.length) {
    forbidden.push({
      name: `${layer.name}-imports-down`,
      comment: `${layer.rooms.join(', ')} may not import a layer above (${above.join(', ')}).`,
      severity: 'error',
      from: { path: pathOf(layer.rooms) },
      to: { path: pathOf(above) },
    });
  }
  if (layer.peers || layer.rooms.length < 2) return;
  for (const room of layer.rooms) {
    forbidden.push({
      name: `${layer.name}-no-peer-imports`,
      comment: `${room} may not import the other rooms of its layer (${layer.rooms.filter((r) => r !== room).join(', ')}).`,
      severity: 'error',
      from: { path: pathOf([room]) },
      to: { path: pathOf(layer.rooms.filter((r) => r !== room)) },
    });
  }
});

module.exports = {
  forbidden,
  options: {
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)node_modules/' },
  },
};
