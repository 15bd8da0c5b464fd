// What the Express adapter costs a request, in process: the Express 5 app
// of bench/middleware_apps.ts called as the function node:http would call,
// on a real IncomingMessage and a real ServerResponse whose bytes go to a
// stream that drops them (no sockets, no parser, no kernel): bare, behind
// an empty middleware, behind rateguard's expressRateLimit and behind
// express-rate-limit with its memory store, with one key and with 10,000
// keys in turn.
//
//   npx deno task bench:middleware:express   (tsx, Node)
//   npx bun bench/express_bench.ts
//   npx deno run -A bench/express_bench.ts
//
// Each request is a fresh request and response, as a server makes them,
// and is awaited to its response's `finish` before the next. The cases run
// in interleaved rounds (BENCH_ROUNDS, default 15, of BENCH_REQUESTS
// requests each, default 10,000) and each figure is its median. Through a
// real server, see bench/middleware_wrk.ts.
//
// `--against DIR` adds another tree's expressRateLimit (an earlier commit's
// checkout, sharing this node_modules), on that tree's own guard, to the
// same rounds, as bench/middleware_bench.ts does for Hono and fetch.
import process from "node:process";
import { parseArgs } from "node:util";
import { pathToFileURL } from "node:url";
import { resolve } from "node:path";
import { IncomingMessage, ServerResponse } from "node:http";
import { Duplex } from "node:stream";
import type { Socket } from "node:net";
import { benchGuard, expressApp, type LimiterName, pathOf } from "./middleware_apps.ts";
import { runtimeName } from "./runtime.ts";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 15);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 10_000);

/** The connection every response writes to: it takes each write at once and keeps nothing. */
const socket = new Duplex({
  read() {},
  write(_chunk, _encoding, done) {
    done();
  },
}) as unknown as Socket;

type App = (req: IncomingMessage, res: ServerResponse) => void;

/** Serves one GET of `url` with `headers` through `app`, to its response's `finish`. */
function serve(app: App, url: string, headers: Record<string, string>): Promise<number> {
  const req = new IncomingMessage(socket);
  req.method = "GET";
  req.url = url;
  req.httpVersionMajor = req.httpVersionMinor = 1;
  req.httpVersion = "1.1";
  req.headers = headers;
  req.push(null);
  const res = new ServerResponse(req);
  res.assignSocket(socket);
  return new Promise((resolve) => {
    res.once("finish", () => {
      res.detachSocket(socket);
      resolve(res.statusCode);
    });
    app(req, res);
  });
}

interface Case {
  readonly name: string;
  readonly app: App;
  readonly keys: number;
  readonly url: string;
  readonly headers: Record<string, string>[];
  readonly us: number[];
}

/** Microseconds a request over `n` requests. */
async function time(c: Case, n: number): Promise<number> {
  const app = c.app;
  const t = performance.now();
  for (let i = 0; i < n; i++) {
    const status = await serve(app, c.url, c.headers[i % c.headers.length]);
    if (status !== 200) throw new Error(`${c.name}: status ${status}`);
  }
  return (performance.now() - t) * 1e3 / n;
}

const { values } = parseArgs({ options: { against: { type: "string" } } });
const guard = await benchGuard();
const app = expressApp(guard) as unknown as App;
const NAMES: [string, LimiterName, App][] = [
  ["bare", "bare", app],
  ["an empty middleware", "empty", app],
  ["rateguard's expressRateLimit", "ours", app],
];
let earlierGuard: Awaited<ReturnType<typeof benchGuard>> | undefined;
if (values.against !== undefined) {
  // On the other tree's own guard, whose Limit its adapter knows.
  const apps: typeof import("./middleware_apps.ts") = await import(
    pathToFileURL(resolve(values.against, "bench/middleware_apps.ts")).href
  );
  earlierGuard = await apps.benchGuard();
  const earlier = apps.expressApp(earlierGuard) as unknown as App;
  NAMES.push(["rateguard's expressRateLimit (--against)", "ours", earlier]);
}
NAMES.push(["express-rate-limit, memory store", "peer", app]);
const cases: Case[] = [];
for (const keys of [1, 10_000]) {
  const headers = Array.from({ length: keys }, (_, i) => ({ "x-key": `tenant:${i}` }));
  for (const [name, limiter, app] of NAMES) {
    cases.push({ name, app, keys, url: pathOf(limiter), headers, us: [] });
  }
}

// Warm up every case (the JIT, every key in every store), then the rounds.
for (const c of cases) await time(c, Math.max(REQUESTS, c.keys));
for (let r = 0; r < ROUNDS; r++) {
  for (const c of cases) c.us.push(await time(c, REQUESTS));
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(
  `${runtimeName()}, Express 5 in process, the median of ${ROUNDS} interleaved rounds of ${REQUESTS} requests:\n`,
);
console.log("| keys | case | µs/request | min–max | × bare's µs |");
console.log("| ---: | --- | ---: | ---: | ---: |");
for (const c of cases) {
  const bare = median(cases.find((b) => b.keys === c.keys && b.url === pathOf("bare"))!.us);
  const us = median(c.us);
  console.log(
    `| ${c.keys} | ${c.name} | ${us.toFixed(2)} | ${Math.min(...c.us).toFixed(2)}–${
      Math.max(...c.us).toFixed(2)
    } | ${(us / bare).toFixed(2)} |`,
  );
}
await guard.leave();
await earlierGuard?.leave();
