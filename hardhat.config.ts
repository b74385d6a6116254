import { createRequire } from "node:module";
import hardhatToolboxViem from "@nomicfoundation/hardhat-toolbox-viem";
import { configVariable, defineConfig } from "hardhat/config";
import parallelBuild from "./lib/hardhat-parallel-build.ts";

const require = createRequire(import.meta.url);
const solcVersion: string = require("solc/package.json").version;

// The compiler comes from the npm package `solc` (its soljson.js, WebAssembly) so that builds never download
// anything: a compiler given by `path` is loaded as a solc-js module and never fetched.
const compiler = {
  version: solcVersion,
  path: require.resolve("solc/soljson.js"),
  settings: {
    evmVersion: "cancun",
    optimizer: { enabled: true, runs: 10_000 },
  },
};

// Uniswap's Permit2, compiled from the Solidity that @uniswap/v4-periphery ships under lib/permit2 (with solmate
// beside it, found through that folder's own remappings.txt) with the settings of its canonical deployment: solc
// 0.8.17 (its exact pragma; the npm package `solc-0.8.17`, offline like the main compiler), via-IR, 1,000,000
// optimizer runs, the compiler's default EVM version, no metadata hash. The local chains install it at its
// canonical address (lib/permit2.ts); the public networks have it there already.
const PERMIT2_SOURCE = "@uniswap/v4-periphery/lib/permit2/src/Permit2.sol";
const permit2Compiler = {
  version: require("solc-0.8.17/package.json").version as string,
  path: require.resolve("solc-0.8.17/soljson.js"),
  settings: { viaIR: true, optimizer: { enabled: true, runs: 1_000_000 }, metadata: { bytecodeHash: "none" } },
};

export default defineConfig({
  // parallelBuild: the compile on every core (lib/hardhat-parallel-build.ts says how).
  plugins: [hardhatToolboxViem, parallelBuild],
  // The same compiler settings in both build profiles: `hardhat build` and the tests use `default`, Ignition
  // deployments `production`. With a single-version config Hardhat gives `production` its own settings
  // (optimizer at 200 runs, the compiler's default EVM version), so deployed bytecode, and the artifacts an
  // Ignition deployment rewrites, would differ from what the tests and the gas snapshot measure.
  solidity: {
    profiles: {
      default: { compilers: [compiler], overrides: { [PERMIT2_SOURCE]: permit2Compiler } },
      production: { compilers: [compiler], overrides: { [PERMIT2_SOURCE]: permit2Compiler } },
    },
    npmFilesToBuild: [PERMIT2_SOURCE],
  },
  ignition: {
    // The local stack polls fast; public networks keep Ignition's default of one second.
    blockPollingInterval: Number(process.env.IGNITION_BLOCK_POLLING_MS ?? 1_000),
  },
  paths: {
    tests: { nodejs: "test/contracts", solidity: "test/solidity" },
  },
  // Contract verification on the public network's explorer (`--verify` with Ignition); the key comes from
  // Hardhat's keystore or the environment, resolved only when verifying.
  verify: {
    etherscan: { apiKey: configVariable("ETHERSCAN_API_KEY") },
  },
  networks: {
    localhost: {
      type: "http",
      chainType: "l1",
      url: process.env.RPC_URL ?? "http://127.0.0.1:8545",
    },
    // `npm run rehearsal` (scripts/rehearsal.ts): a local node that behaves like Base Sepolia (its chain id,
    // an OP-stack chain, a block every 2 s whatever is pending, EIP-1559 base fees), and the network
    // Ignition deploys to on it, configured like `baseSepolia` below: its URL and deployer key are
    // configuration variables (the environment or Hardhat's keystore).
    rehearsalChain: {
      type: "edr-simulated",
      chainType: "op",
      chainId: 84532,
      mining: { auto: false, interval: 2_000 },
    },
    rehearsal: {
      type: "http",
      chainType: "op",
      url: configVariable("REHEARSAL_RPC_URL"),
      accounts: [configVariable("REHEARSAL_DEPLOYER_PRIVATE_KEY")],
    },
    baseSepolia: {
      type: "http",
      chainType: "op",
      url: configVariable("BASE_SEPOLIA_RPC_URL"),
      accounts: [configVariable("DEPLOYER_PRIVATE_KEY")],
    },
  },
});
