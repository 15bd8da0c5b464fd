// What the middleware costs a request through a real server: wrk against
// each stack's bare route, the same route behind rateguard, and behind the
// limiter users would pick instead with its memory store (hono-rate-limiter
// for Hono, express-rate-limit for Express), one key and 10,000 keys.
//
//   npx deno run -A bench/middleware_wrk.ts      (needs wrk: apt-get install -y wrk)
//
// bench/http_bench.ts prints this table too, after the sidecar's, from the
// same command. Hono and the fetch helper serve on the runtime's own server
// (Deno.serve, Bun.serve, @hono/node-server on Node), Express on node:http.
// Every case of a runtime is loaded in turn, BENCH_ROUNDS times (default 7)
// for BENCH_SECONDS (default 1), and each figure is its median with the
// least and most of the rounds, so that the load of others on a shared
// machine falls on every case alike; BENCH_RUNTIMES (default
// deno,bun,node) says which runtimes serve. `--against DIR` serves another
// tree's rateguard routes too (an earlier commit's checkout sharing this
// node_modules), in the same rounds.
import process from "node:process";
import { execFileSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import {
  FETCH_ROUTES,
  HONO_FLOORS,
  type LimiterName,
  LIMITERS,
  pathOf,
} from "./middleware_apps.ts";
import { type RuntimeName, start, type Started } from "../tests/support/process.ts";

const CONNECTIONS = 16;
const KEYS = [1, 10_000] as const;
const STACKS = {
  hono: [...LIMITERS, ...HONO_FLOORS],
  fetch: FETCH_ROUTES,
  express: LIMITERS,
} as const;
const PEER = { hono: "hono-rate-limiter", fetch: "", express: "express-rate-limit" } as const;
/** The table's columns past bare, in order: the route and its heading. */
const COLUMNS: ReadonlyArray<readonly [LimiterName | "against", string]> = [
  ["empty", "empty middleware"],
  ["floor", "check + two fixed fields"],
  ["fields", "two fixed fields"],
  ["silent", "rateguard, no fields"],
  ["ours", "rateguard"],
  ["against", "rateguard (--against)"],
  ["peer", "peer"],
];

/** How the table is measured. */
export interface MiddlewareRun {
  readonly runtimes: readonly RuntimeName[];
  readonly rounds: number;
  readonly seconds: number;
  /** Another tree whose rateguard routes join the rounds. */
  readonly against?: string;
}

interface Case {
  readonly stack: keyof typeof STACKS;
  /** The route, or "against" for the other tree's rateguard route. */
  readonly limiter: LimiterName | "against";
  readonly keys: number;
  readonly url: string;
  readonly rps: number[];
}

/** The wrk script of 10,000 keys in turn: each request names the next. */
function manyKeysScript(): string {
  const path = join(mkdtempSync(join(tmpdir(), "rateguard-mw-")), "keys.lua");
  writeFileSync(
    path,
    `local i = 0\nrequest = function()\n  i = (i + 1) % ${KEYS[1]}\n` +
      `  return wrk.format("GET", nil, { ["x-key"] = "tenant:" .. i })\nend\n`,
  );
  return path;
}

function wrk(c: Case, seconds: number, manyKeys: string): number {
  const keyArgs = c.keys === 1 ? ["-H", "x-key: tenant:0"] : ["-s", manyKeys];
  const out = execFileSync(
    "wrk",
    ["-t1", `-c${CONNECTIONS}`, `-d${seconds}s`, ...keyArgs, c.url],
    { encoding: "utf8" },
  );
  if (/Non-2xx/.test(out)) throw new Error(`answers other than 200 in wrk's output:\n${out}`);
  // A server starved by others' load past wrk's 2 s times connections out:
  // that round's figure is low for every case it hits, and the median copes.
  if (/Socket errors/.test(out)) {
    console.error(`${c.url} (${c.keys} keys): ${/Socket errors.*/.exec(out)?.[0]}`);
  }
  return Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1]);
}

async function measure(runtime: RuntimeName, run: MiddlewareRun): Promise<Case[]> {
  const servers: Started[] = [];
  const manyKeys = manyKeysScript();
  try {
    const cases: Case[] = [];
    for (const stack of Object.keys(STACKS) as Array<keyof typeof STACKS>) {
      const p = start("bench/middleware_server.ts", ["--stack", stack], { runtime });
      servers.push(p);
      const [, base] = await p.waitFor(/listening on (http:\/\/\S+)/);
      let other: string | undefined;
      if (run.against !== undefined) {
        const q = start(join(run.against, "bench/middleware_server.ts"), ["--stack", stack], {
          runtime,
        });
        servers.push(q);
        [, other] = await q.waitFor(/listening on (http:\/\/\S+)/);
      }
      for (const keys of KEYS) {
        for (const limiter of STACKS[stack]) {
          cases.push({ stack, limiter, keys, url: base + pathOf(limiter), rps: [] });
        }
        if (other !== undefined) {
          cases.push({ stack, limiter: "against", keys, url: other + pathOf("ours"), rps: [] });
        }
      }
    }
    for (const c of cases) wrk(c, 1, manyKeys); // the JIT, the connections, every key in every store
    for (let r = 0; r < run.rounds; r++) {
      for (const c of cases) c.rps.push(wrk(c, run.seconds, manyKeys));
      console.error(`middleware, ${runtime}: round ${r + 1} of ${run.rounds}`);
    }
    return cases;
  } finally {
    for (const p of servers) p.kill();
  }
}

const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
const median = (xs: number[]) => sorted(xs)[Math.floor(xs.length / 2)];
const thousands = (n: number) => Math.round(n).toLocaleString("en-US");

/**
 * Measures every runtime of `run` in turn and prints the table: requests a
 * second, median (least to most) of the rounds, each limiter's median as a
 * share of bare's, and what rateguard and the peer cost a request over bare.
 */
export async function middlewareTable(run: MiddlewareRun): Promise<void> {
  const columns = COLUMNS.filter(([l]) => l !== "against" || run.against !== undefined);
  console.log(
    `wrk -t1 -c${CONNECTIONS} -d${run.seconds}s, GET of a short text, ${run.rounds} interleaved rounds; ` +
      `requests a second, median (least to most), and the median's share of bare's:\n`,
  );
  console.log(
    `| runtime | stack | keys | bare | ${
      columns.map(([, head]) => head).join(" | ")
    } | rateguard µs over bare | peer µs over bare |`,
  );
  console.log(`| --- | --- | ---: | ---: |${" ---: |".repeat(columns.length + 2)}`);
  for (const runtime of run.runtimes) {
    const cases = await measure(runtime, run);
    for (const stack of Object.keys(STACKS) as Array<keyof typeof STACKS>) {
      for (const keys of KEYS) {
        const rounds = (l: LimiterName | "against") =>
          cases.find((c) => c.stack === stack && c.keys === keys && c.limiter === l)?.rps;
        const bare = median(rounds("bare")!);
        const spread = (xs: number[]) =>
          `${thousands(median(xs))} (${thousands(sorted(xs)[0])}–${thousands(sorted(xs).at(-1)!)})`;
        const vs = (xs: number[] | undefined) =>
          xs === undefined ? "–" : `${spread(xs)} ${(median(xs) / bare * 100).toFixed(0)}%`;
        const over = (xs: number[] | undefined) =>
          xs === undefined ? "–" : (1e6 / median(xs) - 1e6 / bare).toFixed(1);
        const name = PEER[stack] ? `${stack} (peer: ${PEER[stack]})` : stack;
        console.log(
          `| ${runtime} | ${name} | ${keys} | ${spread(rounds("bare")!)} | ${
            columns.map(([l]) => vs(rounds(l))).join(" | ")
          } | ${over(rounds("ours"))} | ${over(rounds("peer"))} |`,
        );
      }
    }
  }
}

/** The run that BENCH_RUNTIMES, BENCH_ROUNDS and BENCH_SECONDS describe. */
export function middlewareRunFromEnv(against?: string): MiddlewareRun {
  return {
    runtimes: (process.env.BENCH_RUNTIMES ?? "deno,bun,node").split(",") as RuntimeName[],
    rounds: Number(process.env.BENCH_ROUNDS ?? 7),
    seconds: Number(process.env.BENCH_SECONDS ?? 1),
    against,
  };
}

if (import.meta.main) {
  const { values } = parseArgs({ options: { against: { type: "string" } } });
  await middlewareTable(
    middlewareRunFromEnv(values.against === undefined ? undefined : resolve(values.against)),
  );
}
