// A complete GoTrue-style configuration, as a docker-compose file would carry it: the base that
// the configuration tests change one setting at a time.
export const GOTRUE_ENV: Readonly<Record<string, string>> = {
  GOTRUE_SITE_URL: 'https://app.example.com',
  API_EXTERNAL_URL: 'https://auth.example.com',
  GOTRUE_DB_DRIVER: 'postgres',
  DATABASE_URL: 'postgres://auth:pw@db:5432/postgres',
  GOTRUE_JWT_SECRET: 'super-secret-jwt-token-with-at-least-32-characters',
  GOTRUE_SMTP_ADMIN_EMAIL: 'admin@example.com',
  GOTRUE_SMTP_HOST: 'smtp.example.com',
};
