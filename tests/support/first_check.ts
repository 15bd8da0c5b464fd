// Test support: a fresh process whose very first fetch is a client's check
// of the sidecar at argv[2], at the default timeout. Prints, as one JSON
// line, whether that first check was answered, and the median time of the
// nine checks after it, ms: a measure of how busy the machine is.
import process from "node:process";
import { Client } from "../../src/client/mod.ts";

const client = new Client({ url: process.argv[2], onFailure: "throw" });
const check = async () => {
  const startMs = performance.now();
  try {
    await client.check("first");
    return { ms: performance.now() - startMs, error: null };
  } catch (e) {
    return { ms: performance.now() - startMs, error: (e as Error).message };
  }
};
const first = await check();
const later: number[] = [];
for (let i = 0; i < 9; i++) later.push((await check()).ms);
later.sort((a, b) => a - b);
process.stdout.write(JSON.stringify({ firstError: first.error, medianMs: later[4] }) + "\n");
