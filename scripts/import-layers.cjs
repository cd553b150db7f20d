// The layers of src/, bottom first (docs/architecture.md): .dependency-cruiser.cjs builds its rules
// from them and test/units/layout.test.ts checks the picture in docs/architecture.md against them.
/** @type {{ name: string, rooms: string[], peers?: boolean }[]} bottom first */
const LAYERS = [
  { name: 'core', rooms: ['core', 'console'] },
  { name: 'config', rooms: ['config'] },
  { name: 'crypto', rooms: ['crypto'] },
  { name: 'db', rooms: ['db'] },
  { name: 'telemetry', rooms: ['telemetry'] },
  { name: 'services', rooms: ['mail', 'sms', 'oauth', 'web3'] },
  // The seam every handler is given: Deps (deps.ts, deps-telemetry.ts) and Hono's env (app-env.ts).
  { name: 'deps', rooms: ['deps.ts', 'deps-telemetry.ts', 'app-env.ts'], peers: true },
  { name: 'http', rooms: ['http'] },
  { name: 'models', rooms: ['models'] },
  { name: 'hooks', rooms: ['hooks'] },
  { name: 'accounts', rooms: ['accounts'] },
  { name: 'features', rooms: ['flows', 'mfa', 'passkeys', 'sso', 'oauth-server', 'admin'] },
  { name: 'routes', rooms: ['routes', 'openapi'], peers: true },
  { name: 'app', rooms: ['app.ts'] },
  { name: 'adapters', rooms: ['adapters'] },
];

module.exports = { LAYERS };
