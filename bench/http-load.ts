// The load generator of bench/http-throughput.ts, in a process of its own (so that the benchmark's own
// work, e.g. reading the services' logs, does not slow the client down): runs autocannon (programmatic
// API) with the options given as JSON in argv[2] and prints its result as one line of JSON.
//
// With "paths", requests go to each path in turn. With "ownAddresses": true, every connection to
// 127.0.0.1 comes from a loopback address of its own (127.0.1.1 onwards: autocannon opens its connections
// with net.connect(port, host)); with "reconnectRate" a connection is replaced by a new one (so a new
// address) after that many requests: clients that stay under a per-address rate limit.
import net from "node:net";
import autocannon, { type Options } from "autocannon";

const spec = JSON.parse(process.argv[2] ?? "{}") as Options & { ownAddresses?: boolean; paths?: string[] };
if (spec.ownAddresses) {
  const original = net.connect;
  let next = 0;
  (net as { connect: unknown }).connect = (...args: unknown[]) => {
    if (typeof args[0] === "number" && args[1] === "127.0.0.1") {
      // 127.0.1.1 onwards, a new address for every connection (65,024 before one comes again).
      const n = next++ % (254 * 256);
      return original({ port: args[0], host: "127.0.0.1", localAddress: `127.0.${1 + Math.floor(n / 254)}.${1 + (n % 254)}` });
    }
    return (original as (...a: unknown[]) => net.Socket)(...args);
  };
}
const { ownAddresses: _, paths, ...options } = spec;
if (paths && paths.length > 0) {
  // Each request asks for the next of `paths` (e.g. many orders, as many clients polling their own).
  let next = Math.floor(Math.random() * paths.length);
  options.requests = [{ setupRequest: (request) => ({ ...request, path: paths[next++ % paths.length] }) }];
}
const cpu = process.cpuUsage();
const result = await autocannon(options);
const used = process.cpuUsage(cpu);
process.stdout.write(`${JSON.stringify({ ...result, loadGeneratorCpuSeconds: (used.user + used.system) / 1e6 })}\n`);
process.exit(0);
