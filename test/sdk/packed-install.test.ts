// @payg/sdk as an integrator gets it: `npm pack` of the package built with its own tsconfig, installed from
// the tarball into an empty folder outside the repository (offline: test/sdk/support/packed-sdk.ts), and used
// from there against a real stack on loopback (chain, indexer, relayer, device cloud):
// - the tarball holds the built package only, and names no dependency but viem and openapi-fetch;
// - scripts written against it type-check with the package's own declarations (TypeScript, strict);
// - an integrator's script (support/integrator-flow.ts) subscribes a webhook receiver, quotes, orders, pays
//   with a viem account on the rail the order offers, verifies the payment.succeeded delivery, gets a refusal as
//   PaygApiError, and reads the sandbox with the client-credentials client;
// - the README's quick start, extracted from README.md, runs as written.
import assert from "node:assert/strict";
import { execFile, spawn } from "node:child_process";
import { copyFile, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { promisify } from "node:util";
import { freePort } from "../../lib/processes.ts";
import { localPrivateKey } from "../../lib/sample-data.ts";
import { oneDatabaseKind } from "../support/databases.ts";
import { TEST_WALLET_INDEX } from "../support/pay.ts";
import { type Stack, startStack } from "../support/stack.ts";
import { type PackedSdk, packAndInstallSdk } from "./support/packed-sdk.ts";

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, "..", "..");

/** The README's quick start: the first ```ts block of its "Quick start" section. */
export async function readmeQuickStart(): Promise<string> {
  const readme = await readFile(path.join(root, "README.md"), "utf8");
  const section = readme.slice(readme.indexOf("\n## Quick start"));
  const start = section.indexOf("\n```ts\n");
  assert.ok(readme.includes("\n## Quick start") && start >= 0, "README.md has a Quick start section with a ```ts block");
  const body = section.slice(start + "\n```ts\n".length);
  return body.slice(0, body.indexOf("\n```\n") + 1);
}

const database = oneDatabaseKind();
describe(`@payg/sdk installed from its packed tarball, against a stack on ${database}`, { concurrency: false }, () => {
  let stack: Stack;
  let sdk: PackedSdk;
  let env: NodeJS.ProcessEnv;

  before(
    async () => {
      // Both at once; each assigned as soon as it is there, so that after() removes it even if the other failed.
      const packing = packAndInstallSdk().then((packed) => (sdk = packed));
      const starting = startStack({ label: "sdk-packed", database }).then((started) => (stack = started));
      await Promise.all([packing, starting]);
      env = {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        PAYG_API_URL: `${stack.relayerUrl}/v1`,
        RPC_URL: stack.chain.rpcUrl,
        WALLET_PRIVATE_KEY: localPrivateKey(TEST_WALLET_INDEX),
      };
    },
    { timeout: 300_000 },
  );
  after(async () => {
    await stack?.stop();
    await sdk?.remove();
  });

  it("packs the built package only (dist, README, package.json), depending on viem and openapi-fetch alone", async (t) => {
    t.diagnostic(`tarball ${path.basename(sdk.tarball)}: ${sdk.size} bytes; installed offline with \`${sdk.installCommand}\``);
    assert.ok(sdk.files.includes("dist/index.js") && sdk.files.includes("dist/index.d.ts"), "the entry point and its types");
    assert.deepEqual(
      sdk.files.filter((file) => !/^dist\/[\w/-]+\.(?:js|d\.ts)$/.test(file)),
      ["README.md", "package.json"],
    );
    const manifest = JSON.parse(await readFile(path.join(sdk.app, "node_modules", "@payg", "sdk", "package.json"), "utf8"));
    assert.deepEqual(Object.keys(manifest.dependencies).sort(), ["openapi-fetch", "viem"]);
    for (const version of Object.values(manifest.dependencies)) assert.match(String(version), /^\d+\.\d+\.\d+$/, "pinned");
    assert.equal(manifest.devDependencies, undefined);
    assert.equal(manifest.type, "module");
    // Nothing in the built files reaches back into the repository: every import is the package's own file or a
    // dependency, and the JavaScript imports JavaScript (the declarations keep the sources' `.ts` specifiers,
    // which TypeScript resolves to the `.d.ts` beside them).
    let imports = 0;
    for (const file of sdk.files.filter((f) => f.endsWith(".js") || f.endsWith(".d.ts"))) {
      const text = await readFile(path.join(sdk.app, "node_modules", "@payg", "sdk", file), "utf8");
      for (const [, staticSpecifier, dynamicSpecifier] of text.matchAll(
        /^(?:import|export)\b[^";]*?\bfrom "([^"]+)";$|\bimport\("([^"]+)"\)/gm,
      )) {
        const specifier = staticSpecifier ?? dynamicSpecifier;
        imports++;
        if (specifier.startsWith(".")) {
          assert.match(specifier, file.endsWith(".d.ts") ? /^\.\/[\w/-]+\.ts$/ : /^\.\/[\w/-]+\.js$/, `${file}: ${specifier}`);
        } else assert.match(specifier, /^(?:node:\w+|viem(?:\/\w+)?|openapi-fetch)$/, `${file}: ${specifier}`);
      }
    }
    assert.ok(imports >= 20, `the imports were read (${imports})`);
    assert.ok(sdk.size < 200_000, `the tarball is small (${sdk.size} bytes)`);
  });

  it("types an integrator's script and the README's quick start with the package's own declarations", { timeout: 180_000 }, async () => {
    await copyFile(path.join(import.meta.dirname, "support", "integrator-flow.ts"), path.join(sdk.app, "flow.ts"));
    await writeFile(path.join(sdk.app, "quickstart.ts"), await readmeQuickStart());
    await writeFile(
      path.join(sdk.app, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          target: "ES2023",
          module: "NodeNext",
          moduleResolution: "NodeNext",
          strict: true,
          noEmit: true,
          allowImportingTsExtensions: true,
          // Node's own types from the repository (the integrator's project has them too); everything else from the folder.
          typeRoots: [path.join(root, "node_modules", "@types")],
          types: ["node"],
        },
        files: ["flow.ts", "quickstart.ts"],
      }),
    );
    const tsc = path.join(root, "node_modules", "typescript", "bin", "tsc");
    const result = await run(process.execPath, [tsc, "-p", "tsconfig.json"], { cwd: sdk.app }).catch((error) => error);
    assert.equal(result.code ?? 0, 0, `tsc:\n${result.stdout}${result.stderr}`);
  });

  it(
    "quotes, orders, pays with a viem account and verifies the payment's webhook, all from the installed package",
    { timeout: 180_000 },
    async () => {
      await copyFile(path.join(import.meta.dirname, "support", "integrator-flow.ts"), path.join(sdk.app, "flow.ts"));
      const { stdout } = await run(process.execPath, ["flow.ts"], {
        cwd: sdk.app,
        env: {
          ...env,
          PORTAL_EMAIL: stack.sample.email,
          PORTAL_PASSWORD: stack.sample.password,
          DEVICE_ID: stack.sample.devices[0].id,
          ENERGY_API_URL: `${stack.relayerUrl}/energy/v1`,
          ENERGY_CLIENT_ID: stack.sample.energyClient.clientId,
          ENERGY_CLIENT_SECRET: stack.sample.energyClient.clientSecret,
        },
        timeout: 150_000,
      });
      const result = JSON.parse(stdout.trim().split("\n").pop() ?? "{}");
      assert.equal(result.status, "success");
      // The local stack's USDC has EIP-3009: the order offers the authorization, and the SDK paid that way.
      assert.equal(result.offered, "authorization");
      assert.equal(result.rail, "authorization");
      assert.equal(result.payer.toLowerCase(), (await stack.api("GET", `/v1/orders/${result.orderId}`)).body.payment.payer.toLowerCase());
      assert.deepEqual(result.webhook && { type: result.webhook.type, orderId: result.webhook.orderId }, {
        type: "payment.succeeded",
        orderId: result.orderId,
      });
      assert.ok(result.tamperedRejected >= 1, "a tampered copy of the delivery did not verify");
      const order = await stack.api("GET", `/v1/orders/${result.orderId}`);
      assert.equal(order.body.status, "success");
      // A refusal: PaygApiError with the service's status, code and request id.
      assert.equal(result.refused.status, 404);
      assert.equal(result.refused.code, "not_found");
      assert.match(result.refused.requestId, /^req_/);
      // The sandbox's client: one token request for four requests, three of them at once.
      assert.deepEqual(result.energy, { statuses: [200, 200, 200], deviceId: "mtr-kariakoo-001", tokenRequests: 1 });
    },
  );

  it(
    "runs the README's quick start as written: quote, order, pay, a verified webhook, the events to reconcile from",
    { timeout: 180_000 },
    async () => {
      const code = await readmeQuickStart();
      assert.ok(code.trimEnd().split("\n").length < 40, "under 40 lines of code");
      await writeFile(path.join(sdk.app, "quickstart.ts"), code);
      const port = await freePort();
      const login = await stack.api("POST", "/v1/auth/login", { body: { email: stack.sample.email, password: stack.sample.password } });
      const subscription = await stack.api("POST", "/v1/webhooks/subscriptions", {
        token: login.body.accessToken,
        body: { url: `http://127.0.0.1:${port}/`, eventTypes: ["payment.succeeded"] },
      });
      assert.equal(subscription.status, 201, subscription.text);

      const child = spawn(process.execPath, ["quickstart.ts"], {
        cwd: sdk.app,
        env: { ...env, PAYG_API_KEY: stack.sample.developerKey, WEBHOOK_SECRET: subscription.body.secret, PORT: String(port) },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (chunk) => (stdout += chunk));
      child.stderr.on("data", (chunk) => (stderr += chunk));
      const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
      try {
        // The script keeps its webhook receiver listening: it is done once it printed the payment, the events and
        // the verified webhook.
        const deadline = Date.now() + 120_000;
        const done = () =>
          /order ord_\S+ success: 0x[0-9a-f]{64}/.test(stdout) &&
          /payment events, latest evt_/.test(stdout) &&
          /webhook payment\.succeeded \S+ verified/.test(stdout);
        while (!done() && child.exitCode === null && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
        assert.ok(done(), `the quick start printed:\n${stdout}\nstderr:\n${stderr}`);
        const orderId = /order (ord_\S+) success/.exec(stdout)?.[1];
        assert.equal((await stack.api("GET", `/v1/orders/${orderId}`)).body.status, "success");
      } finally {
        child.kill();
        await exited;
      }
    },
  );
});
