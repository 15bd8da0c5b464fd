// What the middleware costs a request, in process: app.fetch (Hono) or the
// handler (fetch) called in a loop on prepared requests, bare beside
// rateguard's middleware and beside hono-rate-limiter with its memory
// store, with one key and with 10,000 keys in turn.
//
//   npx deno run -A bench/middleware_bench.ts
//   npx bun bench/middleware_bench.ts
//   npx tsx bench/middleware_bench.ts
//
// The cases run in interleaved rounds (BENCH_ROUNDS, default 15, of
// BENCH_REQUESTS requests each, default 20,000) and each figure is its
// median: on a shared machine others' load drifts, and interleaving spreads
// it over every case alike. Express in process is bench/express_bench.ts;
// through a real server, bench/middleware_wrk.ts.
//
// `--against DIR` adds another tree's apps (an earlier commit's
// checkout, sharing this node_modules) to the same rounds: before and after
// in one process, as the machine's load drifts over both alike. `--cases
// REGEX` keeps only the cases whose name matches (each still beside its
// bare case), for a longer run of the few a change is about.
import process from "node:process";
import { parseArgs } from "node:util";
import { pathToFileURL } from "node:url";
import { resolve } from "node:path";
import type { Guard } from "../mod.ts";
import { benchGuard, fetchHandler, honoApp, type LimiterName, pathOf } from "./middleware_apps.ts";
import { runtimeName } from "./runtime.ts";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 15);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 20_000);

/** Prepared GET requests of a limiter's route: one key, or `keys` keys in turn. */
function requests(limiter: LimiterName, keys: number): Request[] {
  return Array.from(
    { length: keys },
    (_, i) =>
      new Request(`http://localhost${pathOf(limiter)}`, { headers: { "x-key": `tenant:${i}` } }),
  );
}

type Call = (request: Request) => Response | Promise<Response>;

interface Case {
  readonly name: string;
  readonly base: string;
  readonly call: Call;
  readonly reqs: Request[];
  readonly us: number[];
}

/** Microseconds a request over `n` requests, each awaited as a server would. */
async function time(c: Case, n: number): Promise<number> {
  const { call, reqs } = c;
  const t = performance.now();
  for (let i = 0; i < n; i++) {
    const res = await call(reqs[i % reqs.length]);
    if (res.status !== 200) throw new Error(`${c.name}: status ${res.status}`);
  }
  return (performance.now() - t) * 1e3 / n;
}

const { values } = parseArgs({
  options: { against: { type: "string" }, cases: { type: "string" } },
});
const only = values.cases === undefined ? undefined : new RegExp(values.cases);
const guard = await benchGuard();
const hono = honoApp(guard);
const handler = fetchHandler(guard);
let earlier: { hono: ReturnType<typeof honoApp>; handler: typeof handler } | undefined;
let earlierGuard: Guard | undefined;
if (values.against !== undefined) {
  // The other tree's apps on its own guard: its adapters know its own
  // Limit class (a Limit of this tree's is not an instance of it, and a
  // policy's text would be made anew on each request).
  const apps: typeof import("./middleware_apps.ts") = await import(
    pathToFileURL(resolve(values.against, "bench/middleware_apps.ts")).href
  );
  earlierGuard = await apps.benchGuard();
  earlier = { hono: apps.honoApp(earlierGuard), handler: apps.fetchHandler(earlierGuard) };
}
const cases: Case[] = [];
for (const keys of [1, 10_000]) {
  const k = keys === 1 ? "1 key" : "10k keys";
  const add = (name: string, limiter: LimiterName, call: Call) =>
    (only === undefined || only.test(name) || limiter === "bare") && cases.push({
      name: `${name}, ${k}`,
      base: `${name.split(" ")[0]} ${k}`,
      call,
      reqs: requests(limiter, keys),
      us: [],
    });
  add("Hono bare", "bare", (r) => hono.fetch(r));
  add("Hono + an empty middleware", "empty", (r) => hono.fetch(r));
  add("Hono + check and two fixed fields", "floor", (r) => hono.fetch(r));
  add("Hono + rateguard sending no fields", "silent", (r) => hono.fetch(r));
  if (earlier) {
    add("Hono + rateguard sending no fields (--against)", "silent", (r) => earlier.hono.fetch(r));
  }
  add("Hono + rateguard", "ours", (r) => hono.fetch(r));
  if (earlier) add("Hono + rateguard (--against)", "ours", (r) => earlier.hono.fetch(r));
  add("Hono + hono-rate-limiter", "peer", (r) => hono.fetch(r));
  add("fetch bare", "bare", handler);
  add("fetch + two fixed fields", "fields", handler);
  add("fetch + withRateLimit sending no fields", "silent", handler);
  if (earlier) {
    add("fetch + withRateLimit sending no fields (--against)", "silent", earlier.handler);
  }
  add("fetch + withRateLimit", "ours", handler);
  if (earlier) add("fetch + withRateLimit (--against)", "ours", earlier.handler);
}

// Warm up every case (the JIT, every key in every store), then the rounds.
for (const c of cases) await time(c, Math.max(REQUESTS, c.reqs.length));
for (let r = 0; r < ROUNDS; r++) {
  for (const c of cases) c.us.push(await time(c, REQUESTS));
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(
  `${runtimeName()}, in process, the median of ${ROUNDS} interleaved rounds of ${REQUESTS} requests:\n`,
);
console.log("| case | µs/request | requests/s | vs bare |");
console.log("| --- | ---: | ---: | ---: |");
for (const c of cases) {
  const bare = cases.find((b) => b.base === c.base)!;
  const us = median(c.us), bareUs = median(bare.us);
  console.log(
    `| ${c.name} | ${us.toFixed(2)} | ${Math.round(1e6 / us)} | ${
      (bareUs / us * 100).toFixed(0)
    }% |`,
  );
}
await guard.leave();
await earlierGuard?.leave();
