// What the Hono middleware and the sidecar tell clients after months and
// years of uptime: the same fields, to the second and the millisecond, as a
// process that has just started. The guard runs on a clock the test sets.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Hono } from "hono";
import { Guard, Limit } from "../../mod.ts";
import { MAX_COUNT } from "../../src/core/limit.ts";
import { type Limiter, rateLimit } from "../../src/http/hono.ts";
import { sidecarApp } from "../../src/http/sidecar.ts";
import { UPTIMES_MS } from "../core/time_test.ts";

const DAY_MS = 86_400_000;

interface Case {
  readonly name: string;
  readonly limit: Limit;
  /** Checks spent before the one whose fields are read: all but the last of the burst. */
  readonly spend: number;
  /** `RateLimit` of the last admission and of the denial after it. */
  readonly rateLimit: string;
  /** `Retry-After` of the denial, seconds. */
  readonly retryAfter: string;
  /** The sidecar's `retryAfterMs` and `resetMs` for that denial (whole ms, rounded up). */
  readonly sidecar: { retryAfterMs: number; resetMs: number };
  /** How long after the denial the next request is admitted, ms. */
  readonly waitMs: number;
}

const CASES: Case[] = [
  {
    name: "one an hour",
    limit: Limit.perHour(1).burst(1),
    spend: 0,
    rateLimit: '"default";r=0;t=3600',
    retryAfter: "3600",
    sidecar: { retryAfterMs: 3_600_000, resetMs: 3_600_000 },
    waitMs: 3_600_000,
  },
  {
    name: "three a second",
    limit: Limit.perSecond(3).burst(3),
    spend: 2,
    rateLimit: '"default";r=0;t=1',
    retryAfter: "1",
    sidecar: { retryAfterMs: 334, resetMs: 1_000 },
    waitMs: 333.334,
  },
  {
    name: "a million a second, burst 1",
    limit: Limit.perSecond(1_000_000).burst(1),
    spend: 0,
    rateLimit: '"default";r=0;t=1',
    retryAfter: "1",
    sidecar: { retryAfterMs: 1, resetMs: 1 },
    waitMs: 0.001,
  },
  {
    name: "the fastest rate, with the least burst it allows",
    limit: Limit.perSecond(MAX_COUNT).burst(4_295),
    spend: 4_294,
    rateLimit: '"default";r=0;t=1',
    retryAfter: "1",
    sidecar: { retryAfterMs: 1, resetMs: 1 },
    waitMs: 0.001,
  },
];

/** A guard on a clock at `t0`, and a way to move the clock on. */
async function guardAt(limit: Limit, t0: number) {
  let nowMs = t0;
  const guard = await Guard.builder().defaultLimit(limit).clock(() => nowMs).spawn();
  return { guard, advance: (ms: number) => void (nowMs += ms) };
}

for (const t0 of UPTIMES_MS) {
  describe(`HTTP fields with the clock at ${t0 / DAY_MS} days`, () => {
    for (const c of CASES) {
      it(`Hono, ${c.name}`, async () => {
        const { guard, advance } = await guardAt(c.limit, t0);
        for (let i = 0; i < c.spend; i++) assert(guard.check("k").allowed);
        const app = new Hono();
        app.use(rateLimit({ guard, key: () => "k" }));
        app.get("/", (ctx) => ctx.text("ok"));
        const last = await app.request("/");
        assert.equal(last.status, 200);
        assert.equal(last.headers.get("RateLimit"), c.rateLimit);
        const denied = await app.request("/");
        assert.equal(denied.status, 429);
        assert.equal(denied.headers.get("Retry-After"), c.retryAfter);
        assert.equal(denied.headers.get("RateLimit"), c.rateLimit);
        advance(c.waitMs);
        assert.equal((await app.request("/")).status, 200, "admitted once the wait is over");
      });

      it(`the sidecar, and Hono over it, ${c.name}`, async () => {
        const { guard, advance } = await guardAt(c.limit, t0);
        for (let i = 0; i < c.spend; i++) assert(guard.check("k").allowed);
        const sidecar = sidecarApp(guard);
        const check = async () => {
          const res = await sidecar.request("/v1/check", { method: "POST", body: '{"key":"k"}' });
          return await res.json();
        };
        const last = await check();
        assert.equal(last.allowed, true);
        assert.equal(last.remaining, 0);
        const denied = await check();
        assert.deepEqual(denied, { allowed: false, remaining: 0, ...c.sidecar });
        advance(c.waitMs);
        assert.equal((await check()).allowed, true);
        // Spend what the wait paid back (more than one request at the fastest rate).
        while (guard.peek("k").allowed) guard.check("k");
        // The middleware, deciding through the sidecar, says what the guard does.
        const overSidecar: Limiter = {
          check: async () => {
            const d = await check();
            return { ...d, retryAfterMs: d.retryAfterMs ?? Infinity };
          },
        };
        const app = new Hono();
        app.use(rateLimit({ guard: overSidecar, key: () => "k" }));
        app.get("/", (ctx) => ctx.text("ok"));
        const res = await app.request("/");
        assert.equal(res.status, 429);
        assert.equal(res.headers.get("Retry-After"), c.retryAfter);
        assert.equal(res.headers.get("RateLimit"), c.rateLimit);
      });
    }
  });
}

describe("the clock option", () => {
  it("is validated where it is given, and read at spawn", async () => {
    assert.throws(
      // @ts-expect-error: not a function
      () => Guard.builder().clock(42),
      { name: "TypeError", message: /clock: expected a function returning milliseconds, got 42/ },
    );
    await assert.rejects(
      Guard.builder().limit(10).clock(() => NaN).spawn(),
      { name: "TypeError", message: /clock: it must return finite milliseconds, got NaN/ },
    );
  });
});

describe("a clock that misbehaves after the build", () => {
  it("is an error naming the option when a reading is not finite", async () => {
    let nowMs = 1_000;
    const guard = await Guard.builder().limit(10).clock(() => nowMs).spawn();
    assert.equal(guard.check("k").allowed, true);
    for (const bad of [NaN, Infinity, -Infinity]) {
      nowMs = bad;
      assert.throws(() => guard.check("k"), {
        name: "TypeError",
        message: new RegExp(`clock: it must return finite milliseconds, got ${bad}`),
      });
    }
    await guard.leave();
  });

  it("holds a step backwards at the last reading, so no field goes wrong", async () => {
    let nowMs = 5_000;
    const guard = await Guard.builder().defaultLimit(Limit.perSecond(1).burst(1)).clock(() => nowMs)
      .spawn();
    const app = new Hono();
    app.use(rateLimit({ guard, key: () => "k" }));
    app.get("/", (ctx) => ctx.text("ok"));
    assert.equal((await app.request("/")).status, 200);
    for (const back of [4_000, -10_000]) {
      nowMs = back;
      const res = await app.request("/");
      assert.equal(res.status, 429);
      // Held at 5,000: the next admission is 1 s after the first, as if no time had passed.
      assert.equal(res.headers.get("RateLimit"), '"default";r=0;t=1');
      assert.equal(guard.check("k").retryAfterMs, 1_000);
    }
    nowMs = 6_000;
    assert.equal(guard.check("k").allowed, true);
    await guard.leave();
  });
});
