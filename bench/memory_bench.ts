// What the key table costs in memory when it is full: the default table
// (trackedKeys 4096, so 8,192 places) filled with distinct keys of the
// largest length taken (maxKeyBytes, 1024 bytes of UTF-8 by default), next
// to the same table filled with short keys. Prints the bytes each tracked
// key costs on the heap, and the process's heap and resident size, full.
//
//   deno task bench:memory
//   bun bench/memory_bench.ts
//   node --expose-gc --import tsx bench/memory_bench.ts
//
// Each case runs in a process of its own, from the same start, so that one
// case's garbage cannot count in another's figures. Keys are made by
// JSON.parse, flat strings as the sidecar's body parser makes them, and the
// bench keeps no reference to them: what stays is what the table holds.
import { execFileSync } from "node:child_process";
import process from "node:process";
import { Guard, Limit } from "../mod.ts";
import { DEFAULT_MAX_KEY_BYTES } from "../src/core/key_bytes.ts";
import { runtimeName, selfCommand } from "./runtime.ts";

const runtime = globalThis as unknown as { Bun?: { gc(full: boolean): void }; gc?: () => void };

function collect(): void {
  for (let i = 0; i < 3; i++) {
    if (runtime.Bun) runtime.Bun.gc(true);
    else if (runtime.gc) runtime.gc();
  }
}

interface Figures {
  tracked: number;
  bytesPerKey: number;
  heapMB: number;
  rssMB: number;
}

/** A distinct key of exactly `bytes` bytes (ASCII), as a flat string. */
function keyOf(i: number, bytes: number): string {
  const id = `k${i}:`;
  return JSON.parse(`"${id}${"x".repeat(Math.max(0, bytes - id.length))}"`);
}

async function runCase(keyBytes: number): Promise<Figures> {
  // A limit no key pays off within the run: every key keeps its place.
  const guard = await Guard.builder().defaultLimit(Limit.perHour(1).burst(1)).spawn();
  collect();
  const before = process.memoryUsage();
  // Twice the table's places: the second half finds it full and overflows.
  for (let i = 0; i < 16_384; i++) guard.check(keyOf(i, keyBytes));
  collect();
  const after = process.memoryUsage();
  const tracked = guard.stats().trackedKeys;
  return {
    tracked,
    bytesPerKey: (after.heapUsed - before.heapUsed) / tracked,
    heapMB: after.heapUsed / 2 ** 20,
    rssMB: after.rss / 2 ** 20,
  };
}

const caseArg = process.argv.indexOf("--key-bytes");
if (caseArg !== -1) {
  console.log(JSON.stringify(await runCase(Number(process.argv[caseArg + 1]))));
} else {
  const name = runtimeName();
  const [cmd, args] = selfCommand(new URL(import.meta.url).pathname, ["--v8-flags=--expose-gc"]);
  const run = (bytes: number): Figures =>
    JSON.parse(execFileSync(cmd, [...args, "--key-bytes", String(bytes)], { encoding: "utf8" }));
  console.log(`The default key table, full, on ${name} (16,384 distinct keys offered):\n`);
  console.log("| keys | tracked | heap bytes per tracked key | heap used | RSS |");
  console.log("| --- | ---: | ---: | ---: | ---: |");
  for (const bytes of [16, DEFAULT_MAX_KEY_BYTES]) {
    const f = run(bytes);
    console.log(
      `| ${bytes} bytes | ${f.tracked} | ${Math.round(f.bytesPerKey)} | ${
        f.heapMB.toFixed(1)
      } MB | ${f.rssMB.toFixed(1)} MB |`,
    );
  }
}
