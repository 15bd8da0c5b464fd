// One of the processes of the concurrency test (not a test itself): waits at
// the barrier the parent holds, then checks one hot key `attempts` times and
// prints {"runtime","allowed","denied","failed"} as JSON.
//
//   hammer.ts <schema> <policy id> <limit> <attempts>   (RATEGUARD_PG_URL set)

import { argv, env, exit, stdout } from "node:process";
import postgres from "postgres";
import {
  FixedWindowPolicy,
  KeyHasher,
  LedgerError,
  PostgresLedger,
} from "../../src/postgres/mod.ts";
import { BARRIER, SECRET } from "./server.ts";

const [schema, id, limit, attempts] = argv.slice(-4);
const sql = postgres(env.RATEGUARD_PG_URL!, { max: 2, onnotice: () => {} });
const ledger = new PostgresLedger(sql, { hasher: await KeyHasher.fromSecret(SECRET), schema });
const policy = new FixedWindowPolicy({
  id,
  scope: "tenant",
  limit: Number(limit),
  windowMs: 10 * 60_000,
});

// The parent holds the barrier exclusively until every process waits here.
await sql`SELECT pg_advisory_lock_shared(${BARRIER[0]}, ${BARRIER[1]})`;
await sql`SELECT pg_advisory_unlock_shared(${BARRIER[0]}, ${BARRIER[1]})`;

const counts = { allowed: 0, denied: 0, failed: 0 };
for (let i = 0; i < Number(attempts); i++) {
  try {
    const decision = await ledger.check(policy, "hot-tenant");
    decision.allowed ? counts.allowed++ : counts.denied++;
  } catch (error) {
    if (!(error instanceof LedgerError)) throw error;
    counts.failed++;
  }
}
const runtime = "Deno" in globalThis ? "deno" : "Bun" in globalThis ? "bun" : "node";
stdout.write(JSON.stringify({ runtime, ...counts }) + "\n");
await sql.end({ timeout: 1 });
exit(0);
