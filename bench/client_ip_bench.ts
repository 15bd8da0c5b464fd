// What finding a client's address costs a request, in process: the finder
// behind clientIp, expressClientIp and fetchClientIp, called in a loop on
// a peer and a header, for one client again and again and for 10,000 in
// turn, directly (the peer is the client) and behind a trusted proxy
// (the nearest X-Forwarded-For hop it did not write).
//
//   npx deno run -A bench/client_ip_bench.ts [--against DIR]
//   npx bun bench/client_ip_bench.ts
//   npx tsx bench/client_ip_bench.ts
//
// The cases run in interleaved rounds (BENCH_ROUNDS, default 15, of
// BENCH_REQUESTS calls each, default 20,000) and each figure is its
// median. `--against DIR` adds another tree's finder (an earlier commit's
// checkout) to the same rounds.
import process from "node:process";
import { parseArgs } from "node:util";
import { pathToFileURL } from "node:url";
import { resolve } from "node:path";
import { clientIpResolver } from "../src/http/client_ip.ts";
import { runtimeName } from "./runtime.ts";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 15);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 20_000);

type Resolver = typeof clientIpResolver;
type Get = (name: string) => string | undefined;

interface Case {
  readonly name: string;
  readonly find: ReturnType<Resolver>;
  readonly peers: readonly string[];
  readonly gets: readonly Get[];
  readonly us: number[];
}

const { values } = parseArgs({ options: { against: { type: "string" } } });
const trees: [string, Resolver][] = [["", clientIpResolver]];
if (values.against !== undefined) {
  const other: typeof import("../src/http/client_ip.ts") = await import(
    pathToFileURL(resolve(values.against, "src/http/client_ip.ts")).href
  );
  trees.push([" (--against)", other.clientIpResolver]);
}
const v4 = (i: number) => `198.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
const noHeader: Get = () => undefined;
const cases: Case[] = [];
for (const clients of [1, 10_000]) {
  const n = clients === 1 ? "one client" : "10k clients";
  const ids = Array.from({ length: clients }, (_, i) => i);
  for (const [tree, resolver] of trees) {
    const add = (name: string, find: ReturnType<Resolver>, peers: string[], gets: Get[]) =>
      cases.push({ name: `${name}, ${n}${tree}`, find, peers, gets, us: [] });
    add("IPv4 peer", resolver(), ids.map(v4), [noHeader]);
    add("IPv6 peer, by its /56", resolver(), ids.map((i) => `2001:db8:${i.toString(16)}::1`), [
      noHeader,
    ]);
    add(
      "behind a trusted proxy",
      resolver({ trustProxy: ["10.0.0.0/8"] }),
      ["10.0.0.2"],
      ids.map((i) => {
        const value = `${v4(i)}, 10.0.0.9`;
        return (name: string) => name === "x-forwarded-for" ? value : undefined;
      }),
    );
  }
}

/** Microseconds a call over `n` calls. */
function time(c: Case, n: number): number {
  const { find, peers, gets } = c;
  let length = 0;
  const t = performance.now();
  for (let i = 0; i < n; i++) length += find(peers[i % peers.length], gets[i % gets.length]).length;
  const us = (performance.now() - t) * 1e3 / n;
  if (length === 0) throw new Error(`${c.name}: no address`);
  return us;
}

for (const c of cases) time(c, REQUESTS);
for (let r = 0; r < ROUNDS; r++) for (const c of cases) c.us.push(time(c, REQUESTS));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(
  `${runtimeName()}, in process, the median of ${ROUNDS} interleaved rounds of ${REQUESTS} calls:\n`,
);
console.log("| case | µs/call |");
console.log("| --- | ---: |");
for (const c of cases) console.log(`| ${c.name} | ${median(c.us).toFixed(3)} |`);
