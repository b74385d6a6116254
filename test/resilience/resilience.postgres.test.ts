// The resilience suite (suite.ts) on PostgreSQL, when TEST_DATABASES selects it.
import { selectedDatabaseKinds } from "../support/databases.ts";
import { resilienceSuite } from "./suite.ts";

if (selectedDatabaseKinds().includes("postgres")) resilienceSuite("postgres");
