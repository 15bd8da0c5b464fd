// What the sidecar's HTTP path costs a request, in process: the bench's
// bare Hono endpoint (bench/http_apps.ts, what bench/http_bench.ts serves
// as "bare Hono") beside the sidecar's app (`sidecarApp`), each called
// through its `fetch` on prepared `POST /v1/check` requests, with one key
// and with 10,000 keys, and the sidecar again inside the native servers'
// wrapper (serve_native.ts's `Answering`: the request timeout and the drain), as
// `Deno.serve` and `Bun.serve` call it.
//
//   npx deno run -A bench/sidecar_bench.ts
//   npx bun bench/sidecar_bench.ts
//   npx tsx bench/sidecar_bench.ts
//
// The cases run in interleaved rounds (BENCH_ROUNDS, default 15, of
// BENCH_REQUESTS requests each, default 20,000), each request built before
// its round and awaited as a server would; each figure is the median of
// the rounds, in wall-clock time and in the process's CPU time (every
// thread's, the collector's too: what a saturated server spends a request,
// and steadier than the wall clock on a machine other work shares). wrk through a real server swings twofold on a shared
// machine; this is the steadier figure to compare changes by.
//
// `--against DIR` adds another tree's sidecar and wrapper (an earlier
// commit's checkout, sharing this node_modules) to the same rounds: before
// and after in one process, as the machine's load drifts over both alike.
import process from "node:process";
import { parseArgs } from "node:util";
import { pathToFileURL } from "node:url";
import { resolve } from "node:path";
import { Hono } from "hono";
import { Guard, Limit } from "../mod.ts";
import { sidecarApp } from "../src/http/sidecar.ts";
import { Answering } from "../src/http/serve_native.ts";
import { HTTP_BOUNDS } from "../src/core/options.ts";
import { bareCheck } from "./http_apps.ts";
import { runtimeName } from "./runtime.ts";
import { interleave, median } from "./rounds.ts";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 15);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 20_000);

const ENCODER = new TextEncoder();

type Fetch = (request: Request) => Response | Promise<Response>;

interface Case {
  readonly name: string;
  readonly keys: number;
  readonly call: Fetch;
  /** Wall-clock microseconds a request, one per round. */
  readonly us: number[];
  /** Microseconds of the process's CPU a request (every thread, the collector's too), one per round. */
  readonly cpuUs: number[];
}

/**
 * `n` requests as a server hands them over: a declared length, the body
 * one of `keys` keys in turn, as bytes. A body given as a string is kept
 * as one, and Deno's `text()` and `json()` hand it back with no decode,
 * which no request from a socket has: with string bodies the bare
 * endpoint's `json()` cost a fifth of the sidecar's byte read (0.8 and
 * 2.8 µs of CPU), with bytes about the same (3.2 and 3.6).
 */
function requests(keys: number, n: number, round: number): Request[] {
  return Array.from({ length: n }, (_, i) => {
    const body = ENCODER.encode(
      `{"key": "tenant:${keys === 1 ? 42 : (i + round * 7_919) % keys}"}`,
    );
    return new Request("http://127.0.0.1/v1/check", {
      method: "POST",
      headers: { "content-type": "application/json", "content-length": String(body.length) },
      body,
    });
  });
}

/** Runs `reqs`, each awaited as a server would, and adds the round's figures to `c`. */
async function time(c: Case, reqs: Request[]): Promise<void> {
  const { call } = c;
  const cpu = process.cpuUsage();
  const t = performance.now();
  for (let i = 0; i < reqs.length; i++) {
    const res = await call(reqs[i]);
    if (res.status !== 200) throw new Error(`${c.name}: status ${res.status}`);
  }
  c.us.push((performance.now() - t) * 1e3 / reqs.length);
  const spent = process.cpuUsage(cpu);
  c.cpuUs.push((spent.user + spent.system) / reqs.length);
}

/** The wrappers made, drained at the end: a wrapper's sweep would keep the process running. */
const wrappers: Answering[] = [];

/**
 * `fetch` inside a native servers' wrapper (`Answering` from this tree or
 * the one given), as `Deno.serve` and `Bun.serve` call it.
 */
function wrapped(
  fetch: (request: Request) => Response | Promise<Response>,
  Wrapper: typeof Answering = Answering,
): Fetch {
  const answering = new Wrapper((r) => fetch(r), HTTP_BOUNDS.requestTimeoutMs.default);
  wrappers.push(answering);
  const info = { remoteAddr: { hostname: "127.0.0.1", port: 1 }, completed: Promise.resolve() };
  return (request) => answering.answer(request, info);
}

const { values } = parseArgs({ options: { against: { type: "string" } } });
// A limit no request reaches, as bench/http_bench.ts runs the sidecar.
const guard = await Guard.builder().defaultLimit(Limit.perSecond(1e9)).trackedKeys(16_384)
  .spawn();
const bare = bareCheck(new Hono());
const sidecar = sidecarApp(guard);
let earlier: Hono | undefined;
let EarlierAnswering: typeof Answering | undefined;
if (values.against !== undefined) {
  const from = (file: string) => pathToFileURL(resolve(values.against!, file)).href;
  earlier = (await import(from("src/http/sidecar.ts"))).sidecarApp(guard);
  EarlierAnswering = (await import(from("src/http/serve_native.ts"))).Answering;
}
const cases: Case[] = [];
for (const keys of [1, 10_000]) {
  const add = (name: string, call: Fetch) => cases.push({ name, keys, call, us: [], cpuUs: [] });
  add("bare Hono", (r) => bare.fetch(r));
  add("sidecar", (r) => sidecar.fetch(r));
  if (earlier) add("sidecar (--against)", (r) => earlier.fetch(r));
  add("sidecar in the native wrapper", wrapped((r) => sidecar.fetch(r)));
  if (earlier) {
    add(
      "sidecar (--against) in the native wrapper",
      wrapped((r) => earlier.fetch(r), EarlierAnswering),
    );
  }
}

// Warm up every case (the JIT, every key in the guard), then the rounds.
await interleave(
  cases,
  ROUNDS,
  (c, r) => time(c, requests(c.keys, r === 0 ? Math.max(REQUESTS, c.keys) : REQUESTS, r)),
);

console.log(
  `${runtimeName()}, in process, POST /v1/check, the median of ${ROUNDS} interleaved rounds of ${REQUESTS} requests:\n`,
);
console.log("| case | keys | µs/request | vs bare Hono | CPU µs/request | vs bare Hono |");
console.log("| --- | ---: | ---: | ---: | ---: | ---: |");
for (const c of cases) {
  const bare = cases.find((b) => b.keys === c.keys && b.name === "bare Hono")!;
  const cell = (of: (c: Case) => number[]) => {
    const us = median(of(c));
    return `${us.toFixed(2)} | ${(median(of(bare)) / us * 100).toFixed(0)}%`;
  };
  console.log(
    `| ${c.name} | ${c.keys.toLocaleString("en-US")} | ${cell((c) => c.us)} | ${
      cell((c) => c.cpuUs)
    } |`,
  );
}
for (const w of wrappers) await w.drain(0);
await guard.leave();
