// Names the custom error behind a failed call or gas estimate (e.g. "OrderAlreadyPaid(42)").
import { BaseError, ContractFunctionRevertedError, type Hex, decodeErrorResult, erc20Abi } from "viem";
import { assetSplitAbi, assetSplitFactoryAbi, paymentRouterAbi, telemetryAnchorAbi } from "../../../generated/abis.ts";

const knownErrors = [...paymentRouterAbi, ...assetSplitAbi, ...assetSplitFactoryAbi, ...telemetryAnchorAbi, ...erc20Abi].filter(
  (item) => item.type === "error",
);
const tokenErrors = [
  {
    type: "error",
    name: "ERC20InsufficientBalance",
    inputs: [
      { name: "sender", type: "address" },
      { name: "balance", type: "uint256" },
      { name: "needed", type: "uint256" },
    ],
  },
  {
    type: "error",
    name: "ERC20InsufficientAllowance",
    inputs: [
      { name: "spender", type: "address" },
      { name: "allowance", type: "uint256" },
      { name: "needed", type: "uint256" },
    ],
  },
] as const;

export type RevertReason = { name: string; args: readonly unknown[]; text: string };

export function revertReason(error: unknown): RevertReason | undefined {
  if (!(error instanceof BaseError)) return undefined;
  const reverted = error.walk((e) => e instanceof ContractFunctionRevertedError);
  if (reverted instanceof ContractFunctionRevertedError && reverted.data?.errorName) {
    const args = reverted.data.args ?? [];
    return { name: reverted.data.errorName, args, text: format(reverted.data.errorName, args) };
  }
  const withData = error.walk((e) => typeof (e as { data?: unknown }).data === "string") as { data?: Hex } | null;
  const data = withData?.data;
  if (!data || data.length < 10) return undefined;
  for (const abi of [knownErrors, tokenErrors]) {
    try {
      const decoded = decodeErrorResult({ abi: abi as typeof tokenErrors, data });
      const args = decoded.args ?? [];
      return { name: decoded.errorName, args, text: format(decoded.errorName, args) };
    } catch {
      // not in this ABI
    }
  }
  return { name: "unknown", args: [data], text: `reverted with data ${data}` };
}

function format(name: string, args: readonly unknown[]) {
  return `${name}(${args.map((a) => (typeof a === "bigint" ? a.toString() : String(a))).join(", ")})`;
}
