// Faults: the connection killed while a check is in flight (waiting for a
// key's lock, and at its commit), a lock wait that times out, and no server
// at all. Each must fail closed with the right `mayHaveConsumed` (true when
// the statement was in flight and its outcome never came back, false when
// the database refused or nothing was sent), and leave the ledger
// consistent.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import postgres from "postgres";
import { FixedWindowPolicy, LedgerError, PostgresLedger } from "../../src/postgres/mod.ts";
import { type Fixture, fixture, PG_URL, skipWithoutServer, uniqueId } from "./server.ts";

// The advisory lock class the check function takes key locks in ("rgrd").
const KEY_LOCK_CLASS = 0x72677264;
// A lock of the test's own, which a deferred trigger waits for at COMMIT.
const COMMIT_GATE = [4242, 4242];

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// What a pending check came to: its error, or undefined. Settles at once
// into a value, so a rejection never goes unhandled while the test does
// something else (Node's runner fails the test on an unhandled rejection,
// even one handled later).
function outcome(pending: Promise<unknown>): Promise<unknown> {
  return within(10_000, pending).then(() => undefined, (error) => error);
}

// The check failed closed, as `expected` says.
async function failsClosed(
  settled: Promise<unknown>,
  expected: Partial<Pick<LedgerError, "code" | "mayHaveConsumed" | "sqlState">>,
): Promise<void> {
  const e = await settled;
  assert.ok(e instanceof LedgerError, `expected a LedgerError, got ${String(e)}`);
  const { code, mayHaveConsumed, sqlState } = e;
  assert.deepEqual({ code, mayHaveConsumed, sqlState }, {
    code,
    mayHaveConsumed,
    sqlState,
    ...expected,
  });
}

// A ledger on a pool of its own, whose connections the test kills; the
// fixture's pool, which watches and kills, is never touched by a fault.
function victimLedger(f: Fixture): { ledger: PostgresLedger; end(): Promise<void> } {
  const sql = postgres(PG_URL!, { max: 2, onnotice: () => {} });
  const ledger = new PostgresLedger(sql, { hasher: f.hasher, schema: f.schema });
  return { ledger, end: () => sql.end({ timeout: 1 }) };
}

// A check after a kill. postgres.js may fail the first calls on a pool
// that lost a connection while it reconnects (the FATAL it kept hits the
// next query); each such failure must still fail closed with nothing
// consumed, and a call must succeed within a few tries, each bounded.
async function recovered<T>(call: () => Promise<T>): Promise<T> {
  for (let attempt = 1;; attempt++) {
    try {
      return await within(5_000, call());
    } catch (error) {
      assert.ok(error instanceof LedgerError && !error.mayHaveConsumed, String(error));
      if (attempt === 3) throw error;
    }
  }
}

function within<T>(ms: number, promise: Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

describe("PostgresLedger faults", { skip: skipWithoutServer, timeout: 60_000 }, () => {
  let f: Fixture;
  let holder: postgres.ReservedSql;
  const policy = new FixedWindowPolicy({
    id: uniqueId("faults"),
    scope: "subject",
    limit: 10,
    windowMs: 600_000,
  });

  before(async () => {
    f = await fixture();
    holder = await f.sql.reserve();
  });
  after(async () => {
    holder?.release();
    await f?.dispose();
  });

  // The key lock a check of `subject` waits for: bytes 1-4 of its subject key.
  async function keyLock(subject: string): Promise<[number, number]> {
    const hex = await f.hasher.hexFor(policy, subject);
    return [KEY_LOCK_CLASS, Number.parseInt(hex.slice(2, 10), 16) | 0];
  }

  // The backend of a check blocked on an advisory lock inside `query`.
  async function blockedBackend(query: string): Promise<number> {
    for (let tries = 0; tries < 200; tries++) {
      const rows = await f.sql`SELECT pid FROM pg_stat_activity
        WHERE wait_event_type = 'Lock' AND wait_event = 'advisory'
          AND query LIKE ${query} AND pid <> pg_backend_pid()`;
      if (rows.length > 0) return rows[0].pid as number;
      await sleep(25);
    }
    throw new Error(`no backend blocked in ${query}`);
  }

  async function used(subject: string): Promise<number> {
    const subjectHex = await f.hasher.hexFor(policy, subject);
    const rows = await f.sql.unsafe(
      `SELECT used FROM "${f.schema}".rateguard_fixed_windows
       WHERE subject = decode($1, 'hex') AND policy = decode($2, 'hex')`,
      [subjectHex, await policy.fingerprint()],
    );
    return rows.length === 0 ? 0 : Number(rows[0].used);
  }

  // Rows per shard agree with the capacity ledger, shard by shard.
  async function assertLedgerExact(): Promise<void> {
    const drift = await f.sql.unsafe(`
      SELECT c.shard FROM "${f.schema}".rateguard_capacity c
      LEFT JOIN (SELECT shard, count(*)::int AS n FROM "${f.schema}".rateguard_fixed_windows
                 GROUP BY shard) w ON w.shard = c.shard
      WHERE c.rows <> coalesce(w.n, 0)`);
    assert.equal(drift.length, 0, "capacity ledger drifted");
  }

  test("killed waiting for a key's lock: outcome unknown, nothing written, pool recovers", async () => {
    const victim = victimLedger(f);
    try {
      assert.equal((await victim.ledger.check(policy, "victim")).allowed, true);
      const [cls, id] = await keyLock("victim");
      await holder`SELECT pg_advisory_lock(${cls}, ${id})`;
      try {
        const pending = outcome(victim.ledger.check(policy, "victim"));
        const pid = await blockedBackend("%rateguard_check_v1%");
        await f.sql`SELECT pg_terminate_backend(${pid})`;
        // The client cannot know the kill came before the commit.
        await failsClosed(pending, { code: "Unavailable", mayHaveConsumed: true });
      } finally {
        await holder`SELECT pg_advisory_unlock(${cls}, ${id})`;
      }
      assert.equal(await used("victim"), 1);
      for (let i = 0; i < 6; i++) {
        assert.equal((await recovered(() => victim.ledger.check(policy, "victim"))).allowed, true);
      }
      assert.equal(await used("victim"), 7);
      await assertLedgerExact();
    } finally {
      await victim.end();
    }
  });

  test("killed at commit: outcome unknown, ledger consistent", async () => {
    // A deferred trigger makes the commit wait for a lock the test holds,
    // so the backend can be killed after the check decided and wrote.
    await f.sql.unsafe(`
      CREATE FUNCTION "${f.schema}".gate() RETURNS trigger LANGUAGE plpgsql AS
        $$ BEGIN PERFORM pg_advisory_xact_lock(${COMMIT_GATE[0]}, ${
      COMMIT_GATE[1]
    }); RETURN NULL; END $$;
      CREATE CONSTRAINT TRIGGER gate AFTER INSERT OR UPDATE ON "${f.schema}".rateguard_fixed_windows
        DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION "${f.schema}".gate();`);
    const victim = victimLedger(f);
    try {
      await holder`SELECT pg_advisory_lock(${COMMIT_GATE[0]}, ${COMMIT_GATE[1]})`;
      try {
        const pending = outcome(victim.ledger.check(policy, "committer"));
        const pid = await blockedBackend("%rateguard_check_v1%");
        await f.sql`SELECT pg_terminate_backend(${pid})`;
        await failsClosed(pending, { code: "Unavailable", mayHaveConsumed: true });
      } finally {
        await holder`SELECT pg_advisory_unlock(${COMMIT_GATE[0]}, ${COMMIT_GATE[1]})`;
        await f.sql.unsafe(`DROP TRIGGER gate ON "${f.schema}".rateguard_fixed_windows`);
      }
      // The kill struck before the commit record: nothing was written.
      assert.equal(await used("committer"), 0);
      assert.equal((await recovered(() => victim.ledger.check(policy, "committer"))).remaining, 9);
      await assertLedgerExact();
    } finally {
      await victim.end();
    }
  });

  test("a lock wait the caller's lock_timeout ends: DatabaseError, nothing consumed", async () => {
    const impatient = postgres(PG_URL!, {
      max: 1,
      onnotice: () => {},
      connection: { lock_timeout: 100 },
    });
    const ledger = new PostgresLedger(impatient, { hasher: f.hasher, schema: f.schema });
    try {
      const [cls, id] = await keyLock("waiter");
      await holder`SELECT pg_advisory_lock(${cls}, ${id})`;
      try {
        await failsClosed(outcome(ledger.check(policy, "waiter")), {
          code: "DatabaseError",
          sqlState: "55P03",
          mayHaveConsumed: false,
        });
      } finally {
        await holder`SELECT pg_advisory_unlock(${cls}, ${id})`;
      }
      assert.equal((await recovered(() => ledger.check(policy, "waiter"))).remaining, 9);
    } finally {
      await impatient.end({ timeout: 1 });
    }
  });

  test("no server: Unavailable, nothing consumed", async () => {
    const nowhere = postgres("postgres://nobody@127.0.0.1:1/none", {
      max: 1,
      connect_timeout: 2,
    });
    try {
      const ledger = new PostgresLedger(nowhere, { hasher: f.hasher });
      await failsClosed(outcome(ledger.check(policy, "anyone")), {
        code: "Unavailable",
        mayHaveConsumed: false,
      });
    } finally {
      await nowhere.end({ timeout: 0 });
    }
  });
});
