import { defineConfig } from 'drizzle-kit';

// One schema and one migration set for both engines and both services; each service applies it in its
// own PostgreSQL schema (see src/platform/database.ts).
export default defineConfig({
  dialect: 'postgresql',
  schema: ['./src/platform/schema.ts', './src/content/schema.ts', './src/org/schema.ts', './src/auth/schema.ts'],
  out: './drizzle',
});
