// The sidecar under load: POST /v1/check with wrk, on Deno, Bun and Node,
// next to two Hono endpoints answering the same JSON in the same run, one
// bare (HTTP and JSON alone) and one deciding with rate-limiter-flexible's
// RateLimiterRedis on a Redis server on loopback. Every server is the
// runtime's own (Deno.serve, Bun.serve; @hono/node-server on Node), the
// sidecar's too. Then the README's "compared to a shared counter" row:
// check() in process against one RateLimiterRedis.consume round trip.
//
//   deno task bench:http      (needs wrk and redis-server: apt-get install -y wrk redis-server)
//
// Every server of every runtime is up at once, and each round loads each
// of them in turn for BENCH_SECONDS (default 3), under each load (16 and 64
// connections, 1 key and 10,000 keys drawn at random); BENCH_ROUNDS rounds
// (default 5), of which the table gives the min, median and max.
// BENCH_RUNTIMES (default deno,bun,node) says which runtimes serve. On a
// shared machine the ratios within one run are what count: the load of
// others drifts, and interleaving spreads it over every server alike.
//
// Beside requests a second, each round reads the CPU time the server's
// processes spent (Linux's /proc; the Redis endpoint's round counts
// redis-server's too): CPU microseconds a request, what a saturated core
// pays for one, and on a machine that other work loads far steadier than
// requests a second, which swing with what the scheduler gives the server.
// Its table's ratios are bare over sidecar, the throughput a core would
// give, so that they read as the first table's.
//
// Every server runs at a limit no request reaches, so all three answer the
// same allowed decision and the difference is the cost of deciding.
//
// Then the middleware's table (bench/middleware_wrk.ts): each stack's bare
// route against the same route behind rateguard and behind the peer users
// would pick instead. BENCH_TABLES (default sidecar,middleware) says which
// tables to measure.
import process from "node:process";
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { RateLimiterRedis } from "rate-limiter-flexible";
import { Guard, Limit } from "../mod.ts";
import { type RuntimeName, start, type Started } from "../tests/support/process.ts";
import { waitForStderr } from "../tests/http/support.ts";
import { middlewareTable } from "./middleware_wrk.ts";

const DURATION_S = Number(process.env.BENCH_SECONDS ?? 3);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const REDIS_PORT = 16_379 + Math.floor(Math.random() * 1_000);
const SERVERS = ["bare Hono", "sidecar", "Hono + RateLimiterRedis"] as const;

/** One load: wrk's connections, and how many keys its requests draw from. */
interface Load {
  readonly connections: number;
  readonly keys: number;
  /** The wrk script that sends it. */
  readonly script: string;
}

interface Served {
  readonly runtime: RuntimeName;
  readonly server: (typeof SERVERS)[number];
  readonly process: Started;
  readonly url: string;
  /** The processes whose CPU time is the server's: its own, and redis-server for the Redis endpoint. */
  readonly pids: readonly number[];
}

const dir = mkdtempSync(join(tmpdir(), "rateguard-bench-"));
const LOADS: Load[] = [];
for (const keys of [1, 10_000]) {
  const script = join(dir, `post-${keys}.lua`);
  // One key, or one of `keys` at random, the body built per request.
  writeFileSync(
    script,
    `wrk.method = "POST"\nwrk.headers["Content-Type"] = "application/json"\n` +
      (keys === 1 ? `wrk.body = '{"key": "tenant:42"}'\n` : `request = function()\n` +
        `  return wrk.format(nil, nil, nil, '{"key": "tenant:' .. math.random(${keys}) .. '"}')\nend\n`),
  );
  for (const connections of [16, 64]) LOADS.push({ connections, keys, script });
}

/**
 * CPU seconds `pid` and every process under it have spent (user and
 * system): tsx runs a script in a child of its own. NaN where /proc is
 * missing.
 */
function cpuSeconds(pid: number): number {
  const stat = `/proc/${pid}/stat`;
  if (!existsSync(stat)) return NaN;
  let ticks = 0;
  try {
    // The fields after the command's name (which may hold spaces), utime and stime 14th and 15th.
    const fields = readFileSync(stat, "utf8").split(") ")[1].split(" ");
    ticks = Number(fields[11]) + Number(fields[12]);
  } catch {
    return 0; // It ended meanwhile.
  }
  let seconds = ticks / CLOCK_TICKS;
  const tasks = `/proc/${pid}/task`;
  for (const tid of existsSync(tasks) ? readdirSync(tasks) : []) {
    let children = "";
    try {
      children = readFileSync(`${tasks}/${tid}/children`, "utf8");
    } catch {
      continue;
    }
    for (const child of children.split(" ").filter(Boolean)) seconds += cpuSeconds(Number(child));
  }
  return seconds;
}

/** The kernel's clock ticks a second, in which /proc gives CPU time. */
const CLOCK_TICKS = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }));

const redis = spawn("redis-server", [
  "--port",
  String(REDIS_PORT),
  "--save",
  "",
  "--appendonly",
  "no",
], {
  stdio: "ignore",
});
const TABLES = (process.env.BENCH_TABLES ?? "sidecar,middleware").split(",");
const runtimes = (process.env.BENCH_RUNTIMES ?? "deno,bun,node").split(",") as RuntimeName[];
try {
  await new Promise((resolve) => setTimeout(resolve, 300));
  if (TABLES.includes("sidecar")) {
    const before = loadavg();
    const cpu: Figures = new Map();
    const figures = await measure(runtimes, cpu);
    printTable(figures, before, loadavg());
    printCpuTable(cpu);
    await sharedCounterRow();
  }
} finally {
  redis.kill();
}
if (TABLES.includes("middleware")) {
  // The middleware's table (bench/middleware_wrk.ts), in rounds of its own:
  // 26 routes a runtime, so 1 s rounds, as many as the sidecar's.
  const before = loadavg();
  console.log("\nThe middleware under wrk:\n");
  await middlewareTable({ runtimes, rounds: Math.max(ROUNDS, 5), seconds: 1 });
  console.log(
    `\nload average ${before.map((x) => x.toFixed(2)).join(" ")} before, ${
      loadavg().map((x) => x.toFixed(2)).join(" ")
    } after`,
  );
}

/** Per cell, every round's figure. */
type Figures = Map<string, number[]>;
function cell(runtime: string, server: string, load: Load): string {
  return `${runtime} ${server} ${load.connections} ${load.keys}`;
}

/**
 * Starts every server of every runtime, then loads each in turn, load
 * after load, round after round, keeping every round's requests a second
 * (returned) and its CPU µs a request (into `cpuFigures`).
 */
async function measure(runtimes: RuntimeName[], cpuFigures: Figures): Promise<Figures> {
  const served: Served[] = [];
  const figures: Figures = new Map();
  try {
    for (const runtime of runtimes) {
      for (const name of SERVERS) {
        const [p, url] = name === "sidecar"
          ? await sidecar(runtime)
          : await server(runtime, name === "bare Hono" ? "bare" : "redis");
        const pids = [p.child.pid!];
        if (name === "Hono + RateLimiterRedis") pids.push(redis.pid!);
        served.push({ runtime, server: name, process: p, url, pids });
      }
    }
    // Warm up: the JIT, the connections, Redis's script cache.
    for (const s of served) for (const load of LOADS) wrk(s.url, load, 1);
    for (let r = 0; r < ROUNDS; r++) {
      for (const load of LOADS) {
        for (const s of served) {
          const key = cell(s.runtime, s.server, load);
          const cpu = () => s.pids.reduce((sum, pid) => sum + cpuSeconds(pid), 0);
          const cpuBefore = cpu();
          const out = wrk(s.url, load, DURATION_S);
          const cpuUs = (cpu() - cpuBefore) * 1e6 / parseRequests(out);
          const rps = parseWrk(out);
          figures.set(key, [...figures.get(key) ?? [], rps]);
          cpuFigures.set(key, [...cpuFigures.get(key) ?? [], cpuUs]);
          console.error(`round ${r + 1}: ${key}: ${Math.round(rps)}`);
        }
      }
    }
    return figures;
  } finally {
    for (const s of served) s.process.kill();
  }
}

async function server(runtime: RuntimeName, mode: string): Promise<[Started, string]> {
  const p = start("bench/http_server.ts", ["--mode", mode], {
    runtime,
    env: { REDIS_PORT: String(REDIS_PORT) },
  });
  const [, url] = await p.waitFor(/listening on (http:\/\/\S+)/);
  return [p, url];
}

async function sidecar(runtime: RuntimeName): Promise<[Started, string]> {
  const p = start("cli.ts", [
    "--limit",
    "1000000000",
    "--http",
    "127.0.0.1:0",
    "--log-format",
    "json",
  ], {
    runtime,
  });
  const [line] = await waitForStderr(p, /\{[^\n]*"msg":"listening"[^\n]*\}/);
  return [p, JSON.parse(line).http];
}

function wrk(url: string, load: Load, seconds: number): string {
  return execFileSync("wrk", [
    "-t1",
    `-c${load.connections}`,
    `-d${seconds}s`,
    "-s",
    load.script,
    `${url}/v1/check`,
  ], { encoding: "utf8" });
}

/**
 * Requests a second, from wrk's output; throws on an answer other than
 * 2xx. A round whose requests timed out (a server stalled for others'
 * load) keeps its figure: the median is what the table shows.
 */
function parseWrk(out: string): number {
  if (/Non-2xx/.test(out)) throw new Error(`errors in wrk's output:\n${out}`);
  return Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1]);
}

/** How many requests wrk's output says were answered. */
function parseRequests(out: string): number {
  return Number(/(\d+) requests in/.exec(out)?.[1]);
}

function printTable(figures: Figures, before: number[], after: number[]): void {
  const load1 = (l: number[]) => l.map((x) => x.toFixed(2)).join(" ");
  console.log(
    `wrk -t1, ${DURATION_S} s rounds, POST /v1/check, ${ROUNDS} rounds interleaved over every server and load;` +
      ` requests a second, median (min to max); load average ${load1(before)} before, ${
        load1(after)
      } after:\n`,
  );
  printRows(figures, fmt, ["sidecar / bare", "sidecar / Redis"], (bare, side, redis) => [
    `${(side / bare * 100).toFixed(0)}%`,
    `${(side / redis).toFixed(2)}×`,
  ]);
}

/** The CPU figures: µs a request, median (min to max), and the ratios as throughput on one core. */
function printCpuTable(figures: Figures): void {
  console.log(
    "\nCPU µs a request of the server's processes (redis-server's too for the Redis endpoint), median (min to max):\n",
  );
  printRows(figures, (n) => n.toFixed(1), ["bare / sidecar", "Redis / sidecar"], (
    bare,
    side,
    redis,
  ) => [`${(bare / side * 100).toFixed(0)}%`, `${(redis / side).toFixed(2)}×`]);
}

/**
 * One row a runtime and load of `figures`: each server's median (min to
 * max) as `show` writes a figure, then the two ratios of the medians.
 */
function printRows(
  figures: Figures,
  show: (n: number) => string,
  ratioHeads: [string, string],
  ratios: (bare: number, side: number, redis: number) => [string, string],
): void {
  console.log(
    `| runtime | connections, keys | ${SERVERS.join(" | ")} | ${ratioHeads.join(" | ")} |`,
  );
  console.log("| --- | --- | ---: | ---: | ---: | ---: | ---: |");
  const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
  const median = (xs: number[]) => sorted(xs)[Math.floor(xs.length / 2)];
  const runtimes = [...new Set([...figures.keys()].map((k) => k.split(" ")[0]))];
  for (const runtime of runtimes) {
    for (const load of LOADS) {
      const rounds = SERVERS.map((s) => figures.get(cell(runtime, s, load)) ?? [NaN]);
      const cells = rounds.map((xs) => {
        const s = sorted(xs);
        return `${show(median(xs))} (${show(s[0])}–${show(s[s.length - 1])})`;
      });
      const [bare, side, redis] = rounds.map(median);
      const label = `${load.connections}, ${load.keys === 1 ? "1 key" : `${fmt(load.keys)} keys`}`;
      console.log(
        `| ${runtime} | ${label} | ${cells.join(" | ")} | ${
          ratios(bare, side, redis).join(" | ")
        } |`,
      );
    }
  }
}

function fmt(n: number): string {
  return Math.round(n).toLocaleString("en-US");
}

async function sharedCounterRow(): Promise<void> {
  const guard = await Guard.builder().defaultLimit(Limit.perSecond(1e9)).spawn();
  const n = 1_000_000;
  for (let i = 0; i < n; i++) guard.check("tenant:42");
  let t = performance.now();
  for (let i = 0; i < n; i++) guard.check("tenant:42");
  const checkNs = (performance.now() - t) * 1e6 / n;

  const client = new Redis({ port: REDIS_PORT, enableOfflineQueue: false });
  await new Promise((resolve) => client.once("ready", resolve));
  const limiter = new RateLimiterRedis({ storeClient: client, points: 1e9, duration: 1 });
  const m = 5_000;
  for (let i = 0; i < 500; i++) await limiter.consume("tenant:42");
  t = performance.now();
  for (let i = 0; i < m; i++) await limiter.consume("tenant:42");
  const consumeUs = (performance.now() - t) * 1e3 / m;
  client.disconnect();
  console.log(
    `\ncompared to a shared counter, one decision: check() ${checkNs.toFixed(0)} ns in process; ` +
      `RateLimiterRedis.consume ${consumeUs.toFixed(0)} µs on loopback (${
        Math.round(consumeUs * 1e3 / checkNs)
      }×)`,
  );
}
