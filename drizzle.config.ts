// drizzle-kit: generates the relayer's SQL migrations (relayer/src/db/migrations/) from its drizzle schema,
// offline (no database). `npm run db:generate -- --name <what changed>` after a schema change;
// `npm run db:generate -- --custom --name <what>` for an empty migration to fill with SQL the schema cannot
// express. relayer/src/db/migrate.ts applies them.
import { defineConfig } from "drizzle-kit";

export default defineConfig({
  dialect: "postgresql",
  schema: "./relayer/src/db/schema.ts",
  out: "./relayer/src/db/migrations",
  breakpoints: true,
});
