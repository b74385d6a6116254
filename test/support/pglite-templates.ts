// Where the end-to-end suites keep their PGlite template directories (lib/pglite.ts): a PGlite database is
// made once per PGlite version by initdb, seconds of CPU, and every new PGlite database of a stack is a copy
// of it (test/support/stack.ts, test/indexer/harness.ts), as `npm start` does. scripts/test.ts makes them
// before the first test file starts. A module of its own: test/support/databases.ts creates a PostgreSQL
// database when it loads.
import path from "node:path";

export const PGLITE_TEMPLATES = path.resolve(import.meta.dirname, "..", "..", "test-results", "pglite-templates");
