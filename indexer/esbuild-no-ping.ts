// Preloaded into the indexer process beside event-loop-sampling.ts (`node --import ./event-loop-sampling.ts
// --import ./esbuild-no-ping.ts ponder.js ...`, as lib/indexer.ts starts it). Ponder builds the app with
// Vite, whose esbuild runs as a child process (the esbuild "service") for as long as the indexer runs. esbuild's
// Node API starts it with --ping, and the service then sends the process a ping every second, only to find
// out that the process has gone away: an idle indexer and the service wake for it every second for nothing
// (about 0.2% of a core between them). The service ends when its standard input ends anyway, which happens
// when the indexer exits however it exits (the kernel closes the pipe). This leaves --ping out of the
// service's command line; nothing else changes.
import childProcess from "node:child_process";

const spawn = childProcess.spawn;

function isEsbuildService(args: unknown): args is string[] {
  return Array.isArray(args) && args.some((arg) => typeof arg === "string" && arg.startsWith("--service="));
}

childProcess.spawn = function (this: unknown, ...params: unknown[]) {
  if (isEsbuildService(params[1])) params[1] = params[1].filter((arg) => arg !== "--ping");
  return Reflect.apply(spawn, this, params);
} as typeof spawn;
