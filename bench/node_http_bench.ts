// What the sidecar's HTTP path costs a request on node:http, in one
// process over real loopback sockets: the bench's bare Hono endpoint
// (bench/http_apps.ts) and the sidecar's app (`sidecarApp`), each on
// @hono/node-server's plain `serve` (what bench/http_server.ts serves bare
// Hono with on Node) and on the sidecar's own node:http server with its
// slow-client bounds (`serveHttp` with `server: "node"`, what the CLI
// serves with on Node off loopback). The four cases split what a request
// costs the sidecar beyond bare Hono into its server and its app.
//
//   npx tsx bench/node_http_bench.ts
//   npx bun bench/node_http_bench.ts
//   npx deno run -A bench/node_http_bench.ts
//
// A client in the same process keeps BENCH_CONNECTIONS (default 8)
// kept-alive connections busy, one request in flight on each, for
// BENCH_REQUESTS requests a round (default 20,000), one key or one of
// 10,000 in turn (BENCH_ONLY=text keeps the cases whose name holds it, as
// for a profile: node --import tsx --cpu-prof). The cases run in interleaved rounds (BENCH_ROUNDS,
// default 9), each starting one case further on, and each figure is the
// median of the rounds: CPU µs a request of the whole process (client and
// server, every thread, the collector's too) and the wall clock. The
// client's share is the same in every case, so differences between cases
// are the servers'; wrk through bench/http_bench.ts gives the server's
// CPU alone, in another process.
//
// `--against DIR` adds another tree's sidecar on its own server (an
// earlier commit's checkout, sharing this node_modules) to the same
// rounds: before and after in one process, under the same load.
import process from "node:process";
import { parseArgs } from "node:util";
import { pathToFileURL } from "node:url";
import { resolve } from "node:path";
import { connect, type Socket } from "node:net";
import { Hono } from "hono";
import { serve } from "@hono/node-server";
import { Guard, Limit } from "../mod.ts";
import { sidecarApp } from "../src/http/sidecar.ts";
import { serveHttp } from "../src/http/serve.ts";
import { bareCheck } from "./http_apps.ts";
import { runtimeName } from "./runtime.ts";
import { interleave, median } from "./rounds.ts";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 9);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 20_000);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 8);
/** Only the cases whose name holds this (for a profile of one). */
const ONLY = process.env.BENCH_ONLY ?? "";

type Fetch = (request: Request) => Response | Promise<Response>;

interface Case {
  readonly name: string;
  readonly keys: number;
  readonly port: number;
  /** Wall-clock microseconds a request, one per round. */
  readonly us: number[];
  /** CPU microseconds a request of the process, one per round. */
  readonly cpuUs: number[];
}

/** Serves `fetch` on @hono/node-server's plain `serve`, as bench/http_server.ts does; its port. */
function plain(fetch: Fetch): Promise<{ port: number; close: () => void }> {
  return new Promise((resolve) => {
    const server = serve(
      { fetch, hostname: "127.0.0.1", port: 0 },
      (info) => resolve({ port: info.port, close: () => server.close() }),
    );
  });
}

/** The request bytes of `POST /v1/check` for `key`. */
function request(key: string): Uint8Array {
  const body = `{"key": "${key}"}`;
  return Buffer.from(
    `POST /v1/check HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${body.length}\r\n\r\n${body}`,
  );
}

/** Opens `n` kept-alive connections to `port`. */
async function connections(port: number, n: number): Promise<Socket[]> {
  return await Promise.all(
    Array.from({ length: n }, () =>
      new Promise<Socket>((resolve, reject) => {
        const s = connect(port, "127.0.0.1", () => resolve(s));
        s.setNoDelay(true);
        s.once("error", reject);
      })),
  );
}

/**
 * Sends `total` requests over `sockets`, one in flight on each, the next
 * as the last one's response has come whole (its headers and
 * `Content-Length` bytes of body); resolves when all are answered.
 */
function drive(sockets: Socket[], reqs: Uint8Array[]): Promise<void> {
  let sent = 0;
  let answered = 0;
  const handlers: [Socket, (chunk: Buffer) => void][] = [];
  return new Promise((resolve, reject) => {
    for (const s of sockets) {
      let buffered = "";
      const next = () => {
        if (sent < reqs.length) s.write(reqs[sent++]);
      };
      const onData = (chunk: Buffer) => {
        buffered += chunk.toString("latin1");
        for (;;) {
          const head = buffered.indexOf("\r\n\r\n");
          if (head < 0) return;
          if (!buffered.startsWith("HTTP/1.1 200")) {
            return reject(new Error(`not 200: ${buffered.slice(0, 200)}`));
          }
          const length = /content-length: (\d+)/i.exec(buffered.slice(0, head));
          if (length === null) return reject(new Error(`no length: ${buffered.slice(0, head)}`));
          const end = head + 4 + Number(length[1]);
          if (buffered.length < end) return;
          buffered = buffered.slice(end);
          if (++answered === reqs.length) {
            for (const [t, h] of handlers) t.off("data", h);
            return resolve();
          }
          next();
        }
      };
      s.on("data", onData);
      handlers.push([s, onData]);
      next();
    }
  });
}

/**
 * One round of `c` on connections of its own (a kept-alive connection
 * left idle while other cases run would meet the server's idle timeout):
 * its figures added.
 */
async function time(c: Case, reqs: Uint8Array[]): Promise<void> {
  const sockets = await connections(c.port, CONNECTIONS);
  const cpu = process.cpuUsage();
  const t = performance.now();
  await drive(sockets, reqs);
  c.us.push((performance.now() - t) * 1e3 / reqs.length);
  const spent = process.cpuUsage(cpu);
  c.cpuUs.push((spent.user + spent.system) / reqs.length);
  for (const s of sockets) s.destroy();
}

function requests(keys: number, n: number, round: number): Uint8Array[] {
  return Array.from(
    { length: n },
    (_, i) => request(`tenant:${keys === 1 ? 42 : (i + round * 7_919) % keys}`),
  );
}

// A limit no request reaches, as bench/http_bench.ts runs the sidecar.
const guard = await Guard.builder().defaultLimit(Limit.perSecond(1e9)).trackedKeys(16_384)
  .spawn();
const bare = bareCheck(new Hono());
const sidecar = sidecarApp(guard);
const { values } = parseArgs({ options: { against: { type: "string" } } });
type Served = ({ port: number } | { address: string }) & { close(): unknown };
const servers: Record<string, Served> = {
  "bare Hono, plain serve": await plain(bare.fetch),
  "sidecar app, plain serve": await plain(sidecar.fetch),
  "bare Hono, the sidecar's server": await serveHttp(bare.fetch, {
    hostname: "127.0.0.1",
    port: 0,
    server: "node",
  }),
  "sidecar, the sidecar's server": await serveHttp(sidecar.fetch, {
    hostname: "127.0.0.1",
    port: 0,
    server: "node",
  }),
};
if (values.against !== undefined) {
  const from = (file: string) => pathToFileURL(resolve(values.against!, file)).href;
  const app: Hono = (await import(from("src/http/sidecar.ts"))).sidecarApp(guard);
  const serveThere: typeof serveHttp = (await import(from("src/http/serve.ts"))).serveHttp;
  servers["sidecar (--against), its server"] = await serveThere(app.fetch, {
    hostname: "127.0.0.1",
    port: 0,
    server: "node",
  });
}
const cases: Case[] = [];
for (const keys of [1, 10_000]) {
  for (const [name, s] of Object.entries(servers)) {
    if (!name.includes(ONLY)) continue;
    const port = "port" in s ? s.port : Number(s.address.split(":").at(-1));
    const c: Case = { name, keys, port, us: [], cpuUs: [] };
    cases.push(c);
  }
}

// Warm up every case (the JIT, every key in the guard), then the rounds.
await interleave(
  cases,
  ROUNDS,
  (c, r) => time(c, requests(c.keys, r === 0 ? Math.max(REQUESTS, c.keys) : REQUESTS, r)),
);

console.log(
  `${runtimeName()}, node:http over loopback, ${CONNECTIONS} connections, POST /v1/check, ` +
    `the median of ${ROUNDS} interleaved rounds of ${REQUESTS} requests (client and server in one process):\n`,
);
console.log("| case | keys | µs/request | CPU µs/request | CPU vs bare Hono, plain serve |");
console.log("| --- | ---: | ---: | ---: | ---: |");
for (const c of cases) {
  const base = cases.find((b) => b.keys === c.keys && b.name === "bare Hono, plain serve");
  const cpu = median(c.cpuUs);
  const extra = cpu - (base ? median(base.cpuUs) : NaN);
  console.log(
    `| ${c.name} | ${c.keys.toLocaleString("en-US")} | ${median(c.us).toFixed(2)} | ${
      cpu.toFixed(2)
    } | ${extra >= 0 ? "+" : ""}${extra.toFixed(2)} |`,
  );
}
for (const s of Object.values(servers)) await s.close();
await guard.leave();
