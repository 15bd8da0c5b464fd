// The cost of a check, next to its floor (one monotonic clock read plus one
// Map lookup) and to rate-limiter-flexible's in-memory limiter.
//
//   deno task bench              (Deno)
//   bun bench/check_bench.ts     (Bun)
//   npx tsx bench/check_bench.ts (Node)
//
// Each case runs in a process of its own, so that what the JIT learned from
// one case (a million built strings, say) cannot slow another; inside it the
// case and the floor run in interleaved rounds, so that a slow patch of a
// shared machine hits both alike. The median round is reported, in
// nanoseconds per operation, with its ratio to the floor of the same process.
import { execFileSync } from "node:child_process";
import process from "node:process";
import { RateLimiterMemory } from "rate-limiter-flexible";
import { Guard, Limit } from "../mod.ts";
import { runtimeName, selfCommand } from "./runtime.ts";

const ROUNDS = 9;
const OPS = 2_000_000;

type Body = (n: number) => number | Promise<number>;

async function medianNs(
  body: Body,
  ops: number,
  floor: Body,
): Promise<{ ns: number; floorNs: number }> {
  await body(Math.min(ops, 200_000)); // warm-up: let the JIT settle
  await floor(200_000);
  const ns: number[] = [];
  const floorNs: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    for (const [f, out, n] of [[body, ns, ops], [floor, floorNs, OPS]] as const) {
      const t0 = performance.now();
      if ((await f(n)) === -1) console.log("unreachable"); // keeps the work observable
      out.push(((performance.now() - t0) * 1e6) / n);
    }
  }
  const median = (xs: number[]) => xs.sort((a, b) => a - b)[xs.length >> 1];
  return { ns: median(ns), floorNs: median(floorNs) };
}

async function runCase(name: string): Promise<{ ns: number; floorNs: number }> {
  const floorMap = new Map<string, number>([["api:tenant-42", 1]]);
  const floor: Body = (n) => {
    let s = 0;
    for (let i = 0; i < n; i++) {
      s += performance.now() > 0 && floorMap.get("api:tenant-42") === 1 ? 1 : 0;
    }
    return s;
  };
  // A limit no key reaches: every check takes the allow path.
  const guard = await Guard.builder().defaultLimit(Limit.perSecond(4_000_000_000)).spawn();
  const keys = Array.from({ length: 4096 }, (_, i) => `tenant:${i}`);
  let fresh = 0;
  const flexible = new RateLimiterMemory({ points: 2_000_000_000, duration: 1 });
  const cases: Record<string, [Body, number]> = {
    floor: [floor, OPS],
    hot: [(n) => {
      let s = 0;
      for (let i = 0; i < n; i++) if (guard.check("api:tenant-42").allowed) s++;
      return s;
    }, OPS],
    turn: [(n) => {
      let s = 0;
      for (let i = 0; i < n; i++) if (guard.check(keys[i & 4095]).allowed) s++;
      return s;
    }, OPS],
    // A fresh string per call, a million distinct keys: the key table stays
    // bounded. Building the string is part of the cost, as for a caller.
    fresh: [(n) => {
      let s = 0;
      for (let i = 0; i < n; i++) if (guard.check(`ip:${fresh++ % 1_000_000}`).allowed) s++;
      return s;
    }, 1_000_000],
    flexible: [async (n) => {
      let s = 0;
      for (let i = 0; i < n; i++) {
        if ((await flexible.consume("api:tenant-42")).remainingPoints >= 0) s++;
      }
      return s;
    }, 500_000],
  };
  const [body, ops] = cases[name];
  const result = await medianNs(body, ops, floor);
  if (name === "fresh" && guard.stats().trackedKeys > 8_192) {
    throw new Error("the key table grew past its bound");
  }
  return result;
}

const caseArg = process.argv.indexOf("--case");
if (caseArg !== -1) {
  console.log(JSON.stringify(await runCase(process.argv[caseArg + 1])));
} else {
  const name = runtimeName();
  const [cmd, args] = selfCommand(new URL(import.meta.url).pathname);
  const run = (c: string) =>
    JSON.parse(execFileSync(cmd, [...args, "--case", c], { encoding: "utf8" }).trim());
  const rows: Array<[string, string]> = [
    ["hot", "check(), one hot key"],
    ["turn", "check(), 4096 keys in turn"],
    ["fresh", "check(), a fresh key per call, 1M distinct"],
    ["flexible", "RateLimiterMemory.consume(), one key"],
  ];
  const results = Object.fromEntries(rows.map(([c]) => [c, run(c)]));
  if (process.argv.includes("--json")) {
    console.log(JSON.stringify({ runtime: name, results }));
    process.exit(0);
  }
  const fmt = (x: number) => x.toFixed(1);
  console.log(
    `check() on ${name}: ns per operation, median of ${ROUNDS} rounds, each case in its own process\n`,
  );
  console.log("| case | ns/op | floor in the same process | ratio to floor |");
  console.log("| --- | ---: | ---: | ---: |");
  for (const [c, label] of rows) {
    const r = results[c];
    console.log(
      `| ${label} | ${fmt(r.ns)} | ${fmt(r.floorNs)} | ${(r.ns / r.floorNs).toFixed(2)}x |`,
    );
  }
  const speedup = (results.flexible.ns / results.flexible.floorNs) /
    (results.hot.ns / results.hot.floorNs);
  const raw = results.flexible.ns / results.hot.ns;
  console.log(
    `\none hot key vs RateLimiterMemory: ${raw.toFixed(1)}x faster in ns, ${
      speedup.toFixed(1)
    }x over each one's floor`,
  );
}
