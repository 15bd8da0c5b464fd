// Where the ledger's tests find PostgreSQL: RATEGUARD_PG_URL, or the URL that
// scripts/postgres-start.sh left behind. Without one the tests skip, loudly;
// with RATEGUARD_PG_REQUIRED=1 (as .ci/run sets it) a missing server fails.

import { readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { env } from "node:process";
import postgres from "postgres";
import { KeyHasher, PostgresLedger, type PostgresLedgerOptions } from "../../src/postgres/mod.ts";

function findUrl(): string | undefined {
  if (env.RATEGUARD_PG_URL) return env.RATEGUARD_PG_URL;
  const dir = env.RATEGUARD_PG_DIR ?? join(env.TMPDIR ?? tmpdir(), "rateguard-pg");
  try {
    return readFileSync(join(dir, "url"), "utf8").trim() || undefined;
  } catch {
    return undefined;
  }
}

/** The server's URL, or undefined when there is none. */
export const PG_URL: string | undefined = findUrl();

if (PG_URL === undefined && env.RATEGUARD_PG_REQUIRED === "1") {
  throw new Error(
    "RATEGUARD_PG_REQUIRED=1 but no PostgreSQL server: set RATEGUARD_PG_URL " +
      "(bash scripts/postgres-start.sh prints it)",
  );
}

/** The `skip` option of every test that needs the server. */
export const skipWithoutServer: string | false = PG_URL === undefined
  ? "no PostgreSQL server (run: bash scripts/postgres-start.sh)"
  : false;

if (skipWithoutServer) {
  console.warn(
    "\n!!! SKIPPING the PostgreSQL ledger tests: no server. Start one with\n" +
      "!!!   bash scripts/postgres-start.sh\n" +
      "!!! or set RATEGUARD_PG_URL. CI sets RATEGUARD_PG_REQUIRED=1 and never skips.\n",
  );
}

/** A test's own schema and ledger, dropped again by `dispose`. */
export interface Fixture {
  readonly sql: postgres.Sql;
  readonly ledger: PostgresLedger;
  readonly schema: string;
  readonly hasher: KeyHasher;
  dispose(): Promise<void>;
}

const SECRET = "rateguard test secret, 32 bytes or more, not for production";

/** A fresh schema, migrated, with a ledger over a small pool. */
export async function fixture(
  options: Partial<Omit<PostgresLedgerOptions, "hasher">> & {
    connection?: postgres.Options<never>;
  } = {},
): Promise<Fixture> {
  const schema = options.schema ??
    `rg_test_${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`;
  const sql = postgres(PG_URL!, { max: 4, onnotice: () => {}, ...options.connection });
  const hasher = await KeyHasher.fromSecret(SECRET);
  const ledger = new PostgresLedger(sql, { ...options, hasher, schema });
  await ledger.migrate();
  return {
    sql,
    ledger,
    schema,
    hasher,
    async dispose() {
      await ledger.close();
      // A backend a fault test orphaned may still hold locks until the
      // server notices; a leftover schema in a throwaway server is harmless.
      await sql.begin(async (tx) => {
        await tx`SET LOCAL lock_timeout = '5s'`;
        await tx.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      }).catch((error) => console.warn(`could not drop ${schema}: ${error}`));
      // A connection the server killed can keep postgres.js's end()
      // waiting forever; the timeout ends it anyway.
      await sql.end({ timeout: 1 });
    },
  };
}

/** A unique policy id, so no two tests (or runs) share counters. */
export function uniqueId(prefix: string): string {
  return `${prefix}.${crypto.randomUUID().slice(0, 8)}`;
}

/** The advisory lock the concurrency test's processes wait at before they start. */
export const BARRIER: readonly [number, number] = [4243, 1];

export { SECRET };
