// Writes generated/deployments/<deployment-id>.json for every Ignition deployment under
// ignition/deployments: chain id, and each deployed contract's address, block and block hash (the block
// hash tells a restarted local chain from the one deployed to). Run by `npm run build` and after every
// local deployment. Usage: node scripts/generate-deployments.ts [deployment-id ...]
import { readdir } from "node:fs/promises";
import path from "node:path";
import { deploymentsDir, writeDeploymentRecord } from "../ignition/deployment-records.ts";

const ids = process.argv.slice(2);
const all = await readdir(deploymentsDir).catch(() => [] as string[]);
for (const id of ids.length > 0 ? ids : all) {
  const record = await writeDeploymentRecord(id);
  const names = Object.keys(record.contracts).join(", ");
  console.log(`generated ${path.join("generated", "deployments", `${id}.json`)}: chain ${record.chainId}, ${names}`);
}
