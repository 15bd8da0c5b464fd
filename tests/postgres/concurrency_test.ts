// Exactness under concurrency: eight processes, on Deno, Bun and Node at
// once, hammer one quota of 1,000 per window. Exactly 1,000 are admitted.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { env } from "node:process";
import { fileURLToPath } from "node:url";
import type postgres from "postgres";
import { BARRIER, type Fixture, fixture, PG_URL, skipWithoutServer, uniqueId } from "./server.ts";

const LIMIT = 1_000;
const ATTEMPTS_PER_PROCESS = 200; // 1,600 in all: 600 must be denied
const DEADLINE_MS = 90_000;

const root = fileURLToPath(new URL("../../", import.meta.url));
const bin = (name: string) => `${root}node_modules/.bin/${name}`;
const hammer = fileURLToPath(new URL("./hammer.ts", import.meta.url));
const RUNTIMES: readonly (readonly string[])[] = [
  [bin("deno"), "run", "-A", hammer],
  [bin("bun"), hammer],
  [bin("tsx"), hammer],
];

interface Counts {
  readonly runtime: string;
  readonly allowed: number;
  readonly denied: number;
  readonly failed: number;
}

describe("PostgresLedger concurrency", { skip: skipWithoutServer, timeout: 120_000 }, () => {
  let f: Fixture;
  let gate: postgres.ReservedSql;
  const children: ChildProcess[] = [];

  before(async () => {
    f = await fixture();
    gate = await f.sql.reserve();
  });
  after(async () => {
    for (const child of children) if (child.exitCode === null) child.kill("SIGKILL");
    gate?.release();
    await f?.dispose();
  });

  test("8 processes on 3 runtimes admit exactly the limit", async () => {
    const id = uniqueId("hot");
    await gate`SELECT pg_advisory_lock(${BARRIER[0]}, ${BARRIER[1]})`;
    const results: Promise<Counts>[] = [];
    for (let i = 0; i < 8; i++) {
      const [command, ...args] = RUNTIMES[i % RUNTIMES.length];
      const child = spawn(command, [
        ...args,
        f.schema,
        id,
        String(LIMIT),
        String(ATTEMPTS_PER_PROCESS),
      ], {
        cwd: root,
        env: { ...env, RATEGUARD_PG_URL: PG_URL },
        stdio: ["ignore", "pipe", "pipe"],
      });
      children.push(child);
      results.push(collect(child));
    }
    const deadline = setTimeout(() => children.forEach((c) => c.kill("SIGKILL")), DEADLINE_MS);
    try {
      await waitForWaiters(f.sql, 8);
      await gate`SELECT pg_advisory_unlock(${BARRIER[0]}, ${BARRIER[1]})`;
      const counts = await Promise.all(results);
      const total = (key: "allowed" | "denied" | "failed") =>
        counts.reduce((sum, c) => sum + c[key], 0);
      assert.deepEqual(new Set(counts.map((c) => c.runtime)), new Set(["deno", "bun", "node"]));
      assert.equal(total("failed"), 0);
      assert.equal(total("allowed"), LIMIT, JSON.stringify(counts));
      assert.equal(total("denied"), 8 * ATTEMPTS_PER_PROCESS - LIMIT);
      const [row] = await f.sql.unsafe(
        `SELECT used FROM "${f.schema}".rateguard_fixed_windows`,
      );
      assert.equal(Number(row.used), LIMIT, "the stored count agrees");
    } finally {
      clearTimeout(deadline);
    }
  });
});

// Every process is connected and blocked on the barrier.
async function waitForWaiters(sql: postgres.Sql, count: number): Promise<void> {
  const start = Date.now();
  while (Date.now() - start < DEADLINE_MS) {
    const [{ n }] = await sql`SELECT count(*)::int AS n FROM pg_locks
      WHERE locktype = 'advisory' AND NOT granted AND classid = ${BARRIER[0]} AND objid = ${
      BARRIER[1]
    }`;
    if (n >= count) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`fewer than ${count} processes reached the barrier`);
}

function collect(child: ChildProcess): Promise<Counts> {
  let out = "";
  let err = "";
  child.stdout!.on("data", (chunk) => (out += chunk));
  child.stderr!.on("data", (chunk) => (err += chunk));
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => {
      const line = out.trim().split("\n").pop() ?? "";
      if (code === 0 && line.startsWith("{")) resolve(JSON.parse(line));
      else reject(new Error(`${child.spawnargs.join(" ")} exited ${code}: ${err.slice(-2000)}`));
    });
  });
}
