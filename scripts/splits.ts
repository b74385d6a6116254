// `npm run splits -- <command>`: the split manager's tool. The relayer's hot wallet cannot change a split's
// recipients; this is how a payout change of a device whose split exists reaches the chain, signed by the split
// manager's key (a hardware key, KMS or multisig in production; account 13 of the local stack), never by the
// relayer. The relayer records the tenant's request as the device's pending change (GET /v1/assets:
// payout.pendingChange; `pending` below lists them all) and moves it to the device's parties once the split pays
// them.
//
//   pending                                  devices whose change waits, or whose split pays someone else
//                                            (reads the relayer's PostgreSQL database: DATABASE_URL)
//   show <assetKey>                          the split's recipients, pending proposal and lock, on-chain
//   propose <assetKey> <assetOwner> <operator> [--print]
//                                            proposes the change (SPLIT_MANAGER_PRIVATE_KEY); --print writes the
//                                            transaction (to, data) for a multisig or KMS signer instead
//   execute <assetKey>                       executes it once the factory's delay has passed (any funded key:
//                                            SPLIT_EXECUTOR_PRIVATE_KEY, else the manager's)
//   cancel <assetKey> [--print]              cancels a pending proposal (the manager; the split's asset owner
//                                            may cancel too, from its own wallet)
//   --factory <name>                         with show, propose, execute, cancel: the split factory of another
//                                            stablecoin, by its name in the deployment record (the local
//                                            stack's USDT: AssetSplitFactory_USDT); default the main one's
//
// A device with a split in a second stablecoin (created by its first order in it) has one split per stablecoin,
// each changed at its own factory: propose the same change with --factory for each, or the relayer refuses the
// device's orders in that stablecoin while its split there pays the old recipients (409 split_recipients_mismatch).
//
// Check every request with the tenant out of band before proposing it: the delay lets the asset owner cancel a
// change it did not ask for, and the relayer alerts on a split that pays anyone but the device's parties.
// Environment: RPC_URL (default http://127.0.0.1:8545), DEPLOYMENT (the deployment record, default chain-31337).
// On the local chain (id 31337) the keys default to the local stack's split manager, account 13 of Hardhat's
// well-known test mnemonic; on any other chain they must be given.
import { pathToFileURL } from "node:url";
import pg from "pg";
import {
  type Address,
  type Hex,
  createPublicClient,
  createWalletClient,
  encodeFunctionData,
  getAddress,
  http,
  isAddress,
  isHex,
} from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { assetSplitAbi, assetSplitFactoryAbi } from "../generated/abis.ts";
import { SPLIT_FACTORY, loadDeploymentRecord, splitFactoriesOf } from "../ignition/deployment-records.ts";
import { localPrivateKey } from "../lib/sample-data.ts";

/** The local chain's id, where the local stack's split manager (account 13) is the default signer. */
const LOCAL_CHAIN_ID = 31337;
const LOCAL_SPLIT_MANAGER = 13;

const USAGE =
  "usage: npm run splits -- pending | show <assetKey> | propose <assetKey> <assetOwner> <operator> [--print] | execute <assetKey> | cancel <assetKey> [--print]; show, propose, execute and cancel take --factory <name> (default AssetSplitFactory)";

type Env = Record<string, string | undefined>;

function assetKeyArg(value: string | undefined): Hex {
  if (!value || !isHex(value) || value.length !== 66)
    throw new Error(`an asset key is 0x and 64 hex digits, not ${value ?? "nothing"}\n${USAGE}`);
  return value;
}

function addressArg(value: string | undefined, what: string): Address {
  if (!value || !isAddress(value)) throw new Error(`${what} must be an address (EIP-55 checksum if mixed-case), not ${value ?? "nothing"}`);
  return getAddress(value);
}

function keyFrom(env: Env, chainId: number, ...names: string[]): Hex {
  for (const name of names) {
    const key = env[name];
    if (key) {
      if (!/^0x[0-9a-fA-F]{64}$/.test(key)) throw new Error(`${name} must be a private key: 0x and 64 hex digits`);
      return key as Hex;
    }
  }
  if (chainId === LOCAL_CHAIN_ID) return localPrivateKey(LOCAL_SPLIT_MANAGER);
  throw new Error(`set ${names.join(" or ")} (or use --print and sign the transaction elsewhere)`);
}

/** Runs one command; resolves to what it prints. */
export async function splitsCommand(args: string[], env: Env = process.env): Promise<string> {
  const [command, ...rest] = args;
  const print = rest.includes("--print");
  const factoryAt = rest.indexOf("--factory");
  const factoryName = factoryAt === -1 ? SPLIT_FACTORY : rest[factoryAt + 1];
  if (factoryName === undefined) throw new Error(`--factory takes a name\n${USAGE}`);
  const positional = rest.filter((a, i) => a !== "--print" && (factoryAt === -1 || (i !== factoryAt && i !== factoryAt + 1)));
  if (command === "pending") return pending(env);
  if (!["show", "propose", "execute", "cancel"].includes(command ?? "")) throw new Error(USAGE);
  assetKeyArg(positional[0]);
  const record = await loadDeploymentRecord(env.DEPLOYMENT ?? "chain-31337");
  const factories = splitFactoriesOf(record);
  const factory = factories.find((f) => f.name === factoryName)?.address;
  if (!factory) {
    throw new Error(
      `deployment ${record.deploymentId} has no split factory ${factoryName} (it has: ${factories.map((f) => f.name).join(", ")})`,
    );
  }
  const transport = http(env.RPC_URL ?? "http://127.0.0.1:8545");
  const client = createPublicClient({ transport });
  const read = <T>(functionName: string, callArgs: unknown[]) =>
    client.readContract({ address: factory, abi: assetSplitFactoryAbi, functionName, args: callArgs } as never) as Promise<T>;

  /** Sends `data` to the factory with `key` and waits for it, or (--print) writes it for another signer. */
  async function send(data: Hex, keyNames: string[], what: string): Promise<string> {
    if (print) return JSON.stringify({ to: factory, data }, null, 2);
    const chainId = await client.getChainId();
    const account = privateKeyToAccount(keyFrom(env, chainId, ...keyNames));
    const wallet = createWalletClient({ account, transport, chain: { id: chainId } as never });
    const hash = await wallet.sendTransaction({ to: factory, data, chain: null });
    const receipt = await client.waitForTransactionReceipt({ hash });
    if (receipt.status !== "success") throw new Error(`${what} reverted: ${hash}`);
    return `${what}: ${hash} (block ${receipt.blockNumber})`;
  }

  switch (command) {
    case "show": {
      const assetKey = assetKeyArg(positional[0]);
      const split = await read<Address>("predictSplit", [assetKey]);
      if (!(await read<boolean>("isSplitCreated", [assetKey]))) return `split ${split}: not created`;
      const [[recipients], [owner, operator, executableAt], locked, delay] = await Promise.all([
        client.readContract({ address: split, abi: assetSplitAbi, functionName: "legs" }),
        read<[Address, Address, number]>("pendingRecipients", [assetKey]),
        read<boolean>("recipientsLocked", [assetKey]),
        read<number>("recipientChangeDelay", []),
      ]);
      return JSON.stringify(
        {
          split,
          recipients: { assetOwner: recipients[0], operator: recipients[1], protocol: recipients[2] },
          pendingChange:
            executableAt === 0 ? null : { assetOwner: owner, operator, executableAt: new Date(executableAt * 1000).toISOString() },
          locked,
          recipientChangeDelaySeconds: delay,
        },
        null,
        2,
      );
    }
    case "propose": {
      const assetKey = assetKeyArg(positional[0]);
      const data = encodeFunctionData({
        abi: assetSplitFactoryAbi,
        functionName: "proposeRecipients",
        args: [assetKey, addressArg(positional[1], "assetOwner"), addressArg(positional[2], "operator")],
      });
      return send(data, ["SPLIT_MANAGER_PRIVATE_KEY"], "proposed");
    }
    case "execute": {
      const data = encodeFunctionData({ abi: assetSplitFactoryAbi, functionName: "executeRecipients", args: [assetKeyArg(positional[0])] });
      return send(data, ["SPLIT_EXECUTOR_PRIVATE_KEY", "SPLIT_MANAGER_PRIVATE_KEY"], "executed");
    }
    case "cancel": {
      const data = encodeFunctionData({ abi: assetSplitFactoryAbi, functionName: "cancelRecipients", args: [assetKeyArg(positional[0])] });
      return send(data, ["SPLIT_MANAGER_PRIVATE_KEY"], "cancelled");
    }
    default:
      throw new Error(USAGE);
  }
}

/** The relayer's devices whose payout change waits for the manager, or whose split pays someone else. */
async function pending(env: Env): Promise<string> {
  if (!env.DATABASE_URL) throw new Error("set DATABASE_URL to the relayer's PostgreSQL database");
  const client = new pg.Client({ connectionString: env.DATABASE_URL });
  await client.connect();
  try {
    const { rows } = await client.query(
      `select id, tenant_id, asset_key, split_address, split_status, asset_owner, operator, pending_asset_owner, pending_operator
         from devices where pending_asset_owner is not null or split_status = 'mismatch' order by id`,
    );
    return rows.length === 0 ? "nothing pending" : JSON.stringify(rows, null, 2);
  } finally {
    await client.end();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  splitsCommand(process.argv.slice(2)).then(
    (out) => process.stdout.write(`${out}\n`),
    (error: unknown) => {
      process.stderr.write(`${(error as Error).message}\n`);
      process.exitCode = 1;
    },
  );
}
