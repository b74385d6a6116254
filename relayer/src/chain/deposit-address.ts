// Where PaymentRouter puts an order's deposit address, computed off-chain with the router's formula
// (PaymentRouter.depositAddress): the CREATE2 address, from the router, of OrderDeposit's creation code with the
// order's token as constructor argument, the salt being the order's EIP-712 digest (hashOrder). A payer who can
// only send a plain ERC-20 transfer (an EIP-681 payment request) sends the order amount there; the router
// collects it with payFromDeposit.
import { type Address, type Hex, concatHex, encodeAbiParameters, getContractAddress, keccak256 } from "viem";
import { orderDepositBytecode } from "../../../generated/abis.ts";

/** The deposit address of the order whose EIP-712 digest under `router`'s domain is `digest`, in `token`. */
export function predictDepositAddress(router: Address, digest: Hex, token: Address): Address {
  const initCode = concatHex([orderDepositBytecode, encodeAbiParameters([{ type: "address" }], [token])]);
  return getContractAddress({ opcode: "CREATE2", from: router, salt: digest, bytecodeHash: keccak256(initCode) });
}
