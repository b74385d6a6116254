// Uniswap's Permit2 on the local chains, at its canonical address 0x000000000022D473030F116dDEE9F6B43aC78BA3 (the
// address every public chain has it at, and the one PaymentRouter.PERMIT2 names). It is compiled from the
// Solidity @uniswap/v4-periphery ships (hardhat.config.ts), never copied: the canonical deployment's own creation
// (a CREATE2 of its exact bytecode through the deterministic deployer) cannot be reproduced with a recompile, so
// the local chain gets it the way Foundry's `deployCodeTo` does it:
//   1. hardhat_setCode puts Permit2's creation code at the address;
//   2. an eth_call to the address runs that code as the constructor would run there, with this chain's id and
//      this very address, and returns the runtime code with its immutables (the cached chain id and EIP-712
//      domain separator) filled in for them;
//   3. hardhat_setCode puts that runtime code at the address.
// Permit2's constructor writes no storage, so the result is what a deployment at the address would leave. On a
// chain that has Permit2 already (a public network, or a local chain installed before), nothing is done.
import { readFile } from "node:fs/promises";

/** Permit2's address on every chain. */
export const PERMIT2_ADDRESS = "0x000000000022D473030F116dDEE9F6B43aC78BA3" as const;

const ARTIFACT = new URL("../artifacts/@uniswap/v4-periphery/lib/permit2/src/Permit2.sol/Permit2.json", import.meta.url);

/** A JSON-RPC request to the chain (a Hardhat node's URL, or an in-process provider). */
export type Rpc = (method: string, params: unknown[]) => Promise<unknown>;

/** Permit2's creation code, from the build's artifact (`npm run build` writes it). */
export async function permit2CreationCode(): Promise<`0x${string}`> {
  const artifact = JSON.parse(await readFile(ARTIFACT, "utf8")) as { bytecode: `0x${string}` };
  return artifact.bytecode;
}

/** Installs Permit2 at {@link PERMIT2_ADDRESS} on a Hardhat chain unless code is there already; resolves to
 * whether it installed it. */
export async function installPermit2(rpc: Rpc): Promise<boolean> {
  const existing = (await rpc("eth_getCode", [PERMIT2_ADDRESS, "latest"])) as string;
  if (existing !== "0x") return false;
  await rpc("hardhat_setCode", [PERMIT2_ADDRESS, await permit2CreationCode()]);
  const runtime = (await rpc("eth_call", [{ to: PERMIT2_ADDRESS, data: "0x" }, "latest"])) as string;
  if (!runtime || runtime === "0x") throw new Error("Permit2's constructor returned no runtime code");
  await rpc("hardhat_setCode", [PERMIT2_ADDRESS, runtime]);
  return true;
}
