// Runs the device-cloud simulator: HOST (127.0.0.1), PORT (8789), TIME_SCALE (simulated seconds per second).
import { serve } from "@hono/node-server";
import { z } from "zod";
import { createDeviceCloudSimulator } from "./simulator.ts";

const env = z
  .object({
    HOST: z.string().default("127.0.0.1"),
    PORT: z.coerce.number().int().min(0).max(65_535).default(8789),
    TIME_SCALE: z.coerce.number().positive().max(1_000_000).default(1),
  })
  .safeParse(process.env);
if (!env.success) {
  console.error(`invalid device-cloud configuration: ${env.error.message}`);
  process.exit(1);
}

const { app } = createDeviceCloudSimulator({ timeScale: env.data.TIME_SCALE });
const server = serve({ fetch: app.fetch, hostname: env.data.HOST, port: env.data.PORT }, (info) => {
  console.log(JSON.stringify({ msg: "device cloud simulator listening", host: info.address, port: info.port }));
});
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => server.close(() => process.exit(0)));
}
