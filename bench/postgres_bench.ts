// Throughput and latency of the PostgreSQL ledger: 8 concurrent clients
// (8 loops over a pool of 8 connections) check one hot key, then 10,000
// keys; every check is admitted. Prints a Markdown table.
//
//   RATEGUARD_PG_URL=postgres://… deno run -A bench/postgres_bench.ts [seconds]
//   (bash scripts/postgres-bench.sh starts a server and runs this)

import { argv, env, versions } from "node:process";
import postgres from "postgres";
import { FixedWindowPolicy, KeyHasher, PostgresLedger } from "../src/postgres/mod.ts";

const CLIENTS = 8;
const KEYS = 10_000;
const seconds = Number(argv.slice(2).find((a) => /^\d+$/.test(a)) ?? 10);

interface Result {
  readonly name: string;
  readonly checks: number;
  readonly perSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
}

async function run(name: string, ledger: PostgresLedger, keys: number): Promise<Result> {
  const subject = keys === 1 ? () => "hot" : () => `key-${Math.floor(Math.random() * keys)}`;
  const policy = new FixedWindowPolicy({
    id: `bench.${crypto.randomUUID().slice(0, 8)}`,
    scope: "subject",
    limit: Number.MAX_SAFE_INTEGER,
    windowMs: 3_600_000,
  });
  // Warm-up: every key gets its row, every connection its prepared statement.
  for (let i = 0; i < Math.max(keys, CLIENTS); i += CLIENTS) {
    await Promise.all(
      Array.from(
        { length: CLIENTS },
        (_, c) => ledger.check(policy, keys === 1 ? "hot" : `key-${(i + c) % keys}`),
      ),
    );
  }
  const latenciesMs: number[] = [];
  const endAt = performance.now() + seconds * 1_000;
  const started = performance.now();
  await Promise.all(Array.from({ length: CLIENTS }, async () => {
    while (performance.now() < endAt) {
      const t0 = performance.now();
      const decision = await ledger.check(policy, subject());
      latenciesMs.push(performance.now() - t0);
      if (!decision.allowed) throw new Error(`unexpected denial: ${decision.reason}`);
    }
  }));
  const elapsedS = (performance.now() - started) / 1_000;
  latenciesMs.sort((a, b) => a - b);
  const at = (q: number) =>
    latenciesMs[Math.min(latenciesMs.length - 1, Math.floor(q * latenciesMs.length))];
  return {
    name,
    checks: latenciesMs.length,
    perSecond: latenciesMs.length / elapsedS,
    p50Ms: at(0.5),
    p99Ms: at(0.99),
  };
}

function runtime(): string {
  const v = versions as Record<string, string | undefined>;
  return v.deno ? `Deno ${v.deno}` : v.bun ? `Bun ${v.bun}` : `Node ${v.node}`;
}

const url = env.RATEGUARD_PG_URL;
if (!url) throw new Error("set RATEGUARD_PG_URL (bash scripts/postgres-start.sh prints one)");
const sql = postgres(url, { max: CLIENTS, onnotice: () => {} });
const schema = `rg_bench_${crypto.randomUUID().replaceAll("-", "").slice(0, 8)}`;
const hasher = await KeyHasher.fromSecret(crypto.getRandomValues(new Uint8Array(32)));
const ledger = new PostgresLedger(sql, { hasher, schema });
await ledger.migrate();
try {
  const [version] = await sql`SELECT current_setting('server_version') AS v,
    current_setting('synchronous_commit') AS sync, current_setting('fsync') AS fsync`;
  const results = [
    await run("one key", ledger, 1),
    await run("10,000 keys", ledger, KEYS),
  ];
  console.log(
    `PostgreSQL ${version.v} (synchronous_commit=${version.sync}, fsync=${version.fsync}), ` +
      `${CLIENTS} clients, ${seconds} s each, ${runtime()}\n`,
  );
  console.log("| keys | admitted checks/s | p50 latency | p99 latency |");
  console.log("| --- | ---: | ---: | ---: |");
  for (const r of results) {
    console.log(
      `| ${r.name} | ${Math.round(r.perSecond).toLocaleString("en")} | ` +
        `${r.p50Ms.toFixed(2)} ms | ${r.p99Ms.toFixed(2)} ms |`,
    );
  }
} finally {
  await sql.unsafe(`DROP SCHEMA "${schema}" CASCADE`);
  await sql.end({ timeout: 1 });
}
