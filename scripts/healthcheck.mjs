// The container image's HEALTHCHECK: GET /health/ready on this container's port, exit 0 when it
// answers 200. The port is read as the server reads it (config/names.ts: AUTHSVC_ first, then
// GoTrue's names, then the bare PORT the image sets to 9999).
const env = process.env;
const port = ['AUTHSVC_PORT', 'AUTHSVC_API_PORT', 'GOTRUE_PORT', 'GOTRUE_API_PORT', 'PORT']
  .map((k) => env[k])
  .find((v) => v !== undefined && v !== '');
fetch(`http://127.0.0.1:${port ?? '8081'}/health/ready`, { signal: AbortSignal.timeout(2500) }).then(
  (res) => process.exit(res.ok ? 0 : 1),
  () => process.exit(1),
);
