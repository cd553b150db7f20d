// drizzle-kit reads the table definitions; the SQL in migrations/ is reviewed by hand
// (see README: the namespace is a template parameter there).
import { defineConfig } from 'drizzle-kit';

export default defineConfig({
  dialect: 'postgresql',
  schema: './drizzle/schema.ts',
  out: './drizzle/generated',
  schemaFilter: ['auth'],
});
