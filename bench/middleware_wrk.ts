// What the middleware costs a request through a real server: wrk against
// each stack's bare route, the same route behind rateguard, and behind the
// limiter users would pick instead with its memory store (hono-rate-limiter
// for Hono, express-rate-limit for Express), one key and 10,000 keys.
//
//   npx deno run -A bench/middleware_wrk.ts      (needs wrk: apt-get install -y wrk)
//
// Hono and the fetch helper serve on the runtime's own server (Deno.serve,
// Bun.serve, @hono/node-server on Node), Express on node:http. Every case
// of a runtime is loaded in turn, BENCH_ROUNDS times (default 7) for
// BENCH_SECONDS (default 1), and each figure is its median, so that the
// load of others on a shared machine falls on every case alike;
// BENCH_RUNTIMES (default deno,bun,node) says which runtimes serve.
// `--against DIR` serves another tree's rateguard routes too (an earlier
// commit's checkout sharing this node_modules), in the same rounds.
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

const SECONDS = Number(process.env.BENCH_SECONDS ?? 1);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const CONNECTIONS = 16;
const { values } = parseArgs({ options: { against: { type: "string" } } });
/** Another tree (an earlier commit's checkout sharing this node_modules) whose rateguard routes join the rounds. */
const AGAINST = values.against === undefined ? undefined : resolve(values.against);
const KEYS = [1, 10_000] as const;
const STACKS = {
  hono: [...LIMITERS, ...HONO_FLOORS],
  fetch: FETCH_ROUTES,
  express: LIMITERS,
} as const;
const PEER = { hono: "hono-rate-limiter", fetch: "", express: "express-rate-limit" } as const;

// 10,000 keys in turn: each request names the next.
const manyKeys = join(mkdtempSync(join(tmpdir(), "rateguard-mw-")), "keys.lua");
writeFileSync(
  manyKeys,
  `local i = 0\nrequest = function()\n  i = (i + 1) % ${KEYS[1]}\n` +
    `  return wrk.format("GET", nil, { ["x-key"] = "tenant:" .. i })\nend\n`,
);

interface Case {
  readonly stack: keyof typeof STACKS;
  /** The route, or "against" for the other tree's rateguard route. */
  readonly limiter: LimiterName | "against";
  readonly keys: number;
  readonly url: string;
  readonly rps: number[];
}

function wrk(c: Case, seconds: number): number {
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

async function measure(runtime: RuntimeName): Promise<Case[]> {
  const servers: Started[] = [];
  try {
    const cases: Case[] = [];
    for (const stack of Object.keys(STACKS) as Array<keyof typeof STACKS>) {
      const p = start("bench/middleware_server.ts", ["--stack", stack], { runtime });
      servers.push(p);
      const [, base] = await p.waitFor(/listening on (http:\/\/\S+)/);
      let other: string | undefined;
      if (AGAINST !== undefined) {
        const q = start(join(AGAINST, "bench/middleware_server.ts"), ["--stack", stack], {
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
    for (const c of cases) wrk(c, 1); // the JIT, the connections, every key in every store
    for (let r = 0; r < ROUNDS; r++) for (const c of cases) c.rps.push(wrk(c, SECONDS));
    return cases;
  } finally {
    for (const p of servers) p.kill();
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const runtimes = (process.env.BENCH_RUNTIMES ?? "deno,bun,node").split(",") as RuntimeName[];
console.log(
  `wrk -t1 -c${CONNECTIONS} -d${SECONDS}s, GET of a short text, the median of ${ROUNDS} interleaved rounds:\n`,
);
console.log(
  `| runtime | stack | keys | bare req/s | empty middleware | check + two fixed fields | two fixed fields | rateguard, no fields | rateguard |${
    AGAINST ? " rateguard (--against) |" : ""
  } peer | rateguard µs over bare |${
    AGAINST ? " --against µs over bare |" : ""
  } peer µs over bare |`,
);
console.log(
  `| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |${
    AGAINST ? " ---: | ---: |" : ""
  }`,
);
for (const runtime of runtimes) {
  const cases = await measure(runtime);
  for (const stack of Object.keys(STACKS) as Array<keyof typeof STACKS>) {
    for (const keys of KEYS) {
      const rps = (l: LimiterName | "against") => {
        const c = cases.find((c) => c.stack === stack && c.keys === keys && c.limiter === l);
        return c === undefined ? undefined : median(c.rps);
      };
      const bare = rps("bare")!;
      // requests/s (share of bare), and the µs a request costs over bare.
      const vs = (x: number | undefined) =>
        x === undefined ? "–" : `${Math.round(x)} (${(x / bare * 100).toFixed(0)}%)`;
      const over = (x: number | undefined) =>
        x === undefined ? "–" : (1e6 / x - 1e6 / bare).toFixed(1);
      const name = PEER[stack] ? `${stack} (peer: ${PEER[stack]})` : stack;
      console.log(
        `| ${runtime} | ${name} | ${keys} | ${Math.round(bare)} | ${vs(rps("empty"))} | ${
          vs(rps("floor"))
        } | ${vs(rps("fields"))} | ${vs(rps("silent"))} | ${vs(rps("ours"))} |${
          AGAINST ? ` ${vs(rps("against"))} |` : ""
        } ${vs(rps("peer"))} | ${over(rps("ours"))} |${
          AGAINST ? ` ${over(rps("against"))} |` : ""
        } ${over(rps("peer"))} |`,
      );
    }
  }
}
