// The relayer's two OpenAPI documents as its app serves them (/v1/openapi.json, /energy/openapi.json), built
// in this process: placeholder secrets, an in-memory PGlite database and a placeholder deployment record
// (generated/deployments/openapi-documents.json, git-ignored). Serving the documents signs nothing and
// contacts no chain, indexer or database server, so this runs on a fresh checkout once the contracts' ABIs
// are generated (`hardhat build` + scripts/generate-abis.ts). For `npm run lint` (scripts/write-openapi.ts)
// and the tests that check the documents.
import { saveDeploymentRecord } from "../ignition/deployment-records.ts";
import { createApp } from "../relayer/src/app.ts";
import { loadConfig } from "../relayer/src/config.ts";
import { createServices } from "../relayer/src/main.ts";

/** Where the app serves each document. */
export const OPENAPI_DOCUMENTS = { payments: "/v1/openapi.json", energy: "/energy/openapi.json" } as const;
export type OpenApiDocumentName = keyof typeof OPENAPI_DOCUMENTS;

const DEPLOYMENT_ID = "openapi-documents";
/** Placeholder contract addresses: the documents name none of them. */
const contract = (n: number) => ({
  address: `0x${n.toString(16).padStart(40, "0")}` as `0x${string}`,
  startBlock: 0,
  blockHash: `0x${"00".repeat(32)}` as `0x${string}`,
});

/** Both documents, parsed. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSON documents of any shape
export async function buildOpenApiDocuments(): Promise<Record<OpenApiDocumentName, any>> {
  await saveDeploymentRecord({
    deploymentId: DEPLOYMENT_ID,
    chainId: 84532,
    contracts: { PaymentRouter: contract(1), AssetSplitFactory: contract(2), TelemetryAnchor: contract(3) },
  });
  const config = loadConfig({
    QUOTE_SIGNER_PRIVATE_KEY: `0x${"11".repeat(32)}`,
    RELAYER_PRIVATE_KEY: `0x${"22".repeat(32)}`,
    JWT_SECRET: "j".repeat(32),
    WEBHOOK_SECRET_KEY: "w".repeat(32),
    PGLITE_DIR: "memory://openapi-documents",
    DEPLOYMENT: DEPLOYMENT_ID,
    LOG_LEVEL: "error",
    PUBLIC_BASE_URL: "https://payments.example.com",
  });
  const services = await createServices(config);
  try {
    const app = createApp(services);
    const out = {} as Record<OpenApiDocumentName, unknown>;
    for (const [name, path] of Object.entries(OPENAPI_DOCUMENTS) as Array<[OpenApiDocumentName, string]>) {
      const response = await app.request(path);
      if (response.status !== 200) throw new Error(`${path} answered ${response.status}`);
      out[name] = await response.json();
    }
    return out;
  } finally {
    await services.database.close();
  }
}
