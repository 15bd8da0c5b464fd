// The sidecar under load: POST /v1/check with wrk, on Deno and on Bun, next
// to two Hono endpoints answering the same JSON in the same run, one bare
// (HTTP and JSON alone) and one deciding with rate-limiter-flexible's
// RateLimiterRedis on a Redis server on loopback. Then the README's
// "compared to a shared counter" row: check() in process against one
// RateLimiterRedis.consume round trip.
//
//   deno task bench:http      (needs wrk and redis-server: apt-get install -y wrk redis-server)
//
// Each server is loaded BENCH_ROUNDS times (default 5) for BENCH_SECONDS
// (default 3), in turn with the others; BENCH_RUNTIMES (default deno,bun)
// says which runtimes serve.
//
// Every server runs at a limit no request reaches, so all three answer the
// same allowed decision and the difference is the cost of deciding.
import process from "node:process";
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { RateLimiterRedis } from "rate-limiter-flexible";
import { Guard, Limit } from "../mod.ts";
import { type RuntimeName, start, type Started } from "../tests/support/process.ts";
import { waitForStderr } from "../tests/http/support.ts";

const DURATION_S = Number(process.env.BENCH_SECONDS ?? 3);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const CONNECTIONS = 16;
const REDIS_PORT = 16_379 + Math.floor(Math.random() * 1_000);

interface Row {
  runtime: RuntimeName;
  server: string;
  rps: number;
  p50Ms: number;
  p99Ms: number;
}

const script = join(mkdtempSync(join(tmpdir(), "rateguard-bench-")), "post.lua");
writeFileSync(
  script,
  `wrk.method = "POST"\nwrk.body = '{"key": "tenant:42"}'\nwrk.headers["Content-Type"] = "application/json"\n`,
);

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
try {
  await new Promise((resolve) => setTimeout(resolve, 300));
  const rows: Row[] = [];
  const runtimes = (process.env.BENCH_RUNTIMES ?? "deno,bun").split(",") as RuntimeName[];
  for (const runtime of runtimes) rows.push(...await measure(runtime));
  printTable(rows);
  await sharedCounterRow();
} finally {
  redis.kill();
}

/**
 * Loads the three servers of one runtime in turn, round after round, and
 * keeps the median of each figure: on a shared machine the load of others
 * drifts, and interleaving spreads it evenly over the three.
 */
async function measure(runtime: RuntimeName): Promise<Row[]> {
  const servers: Array<[string, Started, string]> = [];
  try {
    servers.push(["bare Hono", ...await server(runtime, "bare")]);
    servers.push(["sidecar", ...await sidecar(runtime)]);
    servers.push(["Hono + RateLimiterRedis", ...await server(runtime, "redis")]);
    // Warm up: the JIT, the connections, Redis's script cache.
    for (const [, , url] of servers) wrk(url, 1);
    const rounds = servers.map(() => [] as Array<ReturnType<typeof parseWrk>>);
    for (let r = 0; r < ROUNDS; r++) {
      servers.forEach(([, , url], i) => rounds[i].push(parseWrk(wrk(url, DURATION_S))));
    }
    // Each figure's median on its own: a round that stalls for others' load
    // moves one figure of three, not all three.
    const median = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    return servers.map(([name], i) => ({
      runtime,
      server: name,
      rps: median(rounds[i].map((r) => r.rps)),
      p50Ms: median(rounds[i].map((r) => r.p50Ms)),
      p99Ms: median(rounds[i].map((r) => r.p99Ms)),
    }));
  } finally {
    for (const [, p] of servers) p.kill();
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

function wrk(url: string, seconds: number): string {
  return execFileSync("wrk", [
    "-t1",
    `-c${CONNECTIONS}`,
    `-d${seconds}s`,
    "--latency",
    "-s",
    script,
    `${url}/v1/check`,
  ], { encoding: "utf8" });
}

function parseWrk(out: string): { rps: number; p50Ms: number; p99Ms: number } {
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1]);
  const pct = (p: string) => {
    const m = new RegExp(`\\s${p}%\\s+([\\d.]+)(us|ms|s)`).exec(out);
    if (!m) throw new Error(`no ${p}% in wrk's output:\n${out}`);
    return Number(m[1]) * (m[2] === "us" ? 1e-3 : m[2] === "s" ? 1e3 : 1);
  };
  if (/Non-2xx/.test(out)) throw new Error(`errors in wrk's output:\n${out}`);
  return { rps, p50Ms: pct("50"), p99Ms: pct("99") };
}

function printTable(rows: Row[]): void {
  console.log(
    `wrk -t1 -c${CONNECTIONS} -d${DURATION_S}s, POST /v1/check, the median of ${ROUNDS} rounds:\n`,
  );
  console.log("| runtime | server | requests/s | vs bare | p50 | p99 |");
  console.log("| --- | --- | ---: | ---: | ---: | ---: |");
  for (const r of rows) {
    const bare = rows.find((b) => b.runtime === r.runtime && b.server === "bare Hono")!;
    console.log(
      `| ${r.runtime} | ${r.server} | ${Math.round(r.rps)} | ${
        (r.rps / bare.rps * 100).toFixed(0)
      }% | ${ms(r.p50Ms)} | ${ms(r.p99Ms)} |`,
    );
  }
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

function ms(v: number): string {
  return v < 1 ? `${(v * 1e3).toFixed(0)} µs` : `${v.toFixed(2)} ms`;
}
