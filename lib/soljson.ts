// The Solidity compiler from the npm package `solc` (soljson.js, WebAssembly), as hardhat.config.ts gives it
// to Hardhat: Hardhat loads it to read its version, and each compilation job runs it in a process of its own.
//
// V8 compiles WebAssembly twice: at once with its baseline compiler (Liftoff), then the functions that run
// often again, optimised (TurboFan), on other threads. A compilation job is a few seconds of one call into
// the compiler, and the optimised code comes too late to pay for itself: with Liftoff only, a job of
// contracts/ took 6.2-6.5 s instead of 6.2-6.9 s and 6.4-7.1 s of CPU instead of 7.6-8.2 s (three runs each,
// 2-core AMD EPYC host). The spare CPU goes to the work beside the compile (`npm start` compiles while it
// creates its databases and starts its chain). Set before soljson.js compiles its WebAssembly; the flag only
// concerns WebAssembly compiled after it, and Hardhat's processes compile no other.
import { createRequire } from "node:module";
import v8 from "node:v8";

v8.setFlagsFromString("--liftoff-only");

const soljson: unknown = createRequire(import.meta.url)("solc/soljson.js");
export default soljson;
