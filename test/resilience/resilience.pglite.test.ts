// The resilience suite (suite.ts) on the embedded PGlite, when TEST_DATABASES selects it.
import { selectedDatabaseKinds } from "../support/databases.ts";
import { resilienceSuite } from "./suite.ts";

if (selectedDatabaseKinds().includes("pglite")) resilienceSuite("pglite");
