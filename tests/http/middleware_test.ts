// One suite for the three adapters (Hono, fetch, Express): the same
// options give the same fields and answers on each.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Guard, Limit } from "../../mod.ts";
import { EMPTY_KEY, type Limiter, RequestLimiter } from "../../src/http/limiting.ts";
import { ADAPTERS, type App, type Options } from "./adapters.ts";

/** A guard that also tells its limit, as `Limiter.limitFor` allows. */
async function limiter(limit: Limit): Promise<Limiter> {
  const guard = await Guard.builder().defaultLimit(limit).spawn();
  return {
    check: (key, options) => guard.check(key, options),
    limitFor: () => limit,
    maxKeyBytes: () => guard.maxKeyBytes(),
  };
}

const tenant: Options["key"] = (h) => h("x-tenant");
const as = (t: string) => ({ "x-tenant": t });

for (const adapter of ADAPTERS) {
  describe(`the ${adapter.name} adapter`, () => {
    async function withApp(options: Options, body: (app: App) => Promise<void>): Promise<void> {
      const app = await adapter.make(options);
      try {
        await body(app);
      } finally {
        await app.close();
      }
    }

    it("limits an empty key as one shared key: no 500, no bypass", async () => {
      const guard = await limiter(Limit.perHour(1).burst(1));
      await withApp({ guard, key: tenant }, async (app) => {
        const first = await app.ask("/", as(""));
        assert.equal(first.status, 200);
        assert.equal(await first.text(), `${EMPTY_KEY}|0`);
        // Every empty key is that one key: a second is denied, not a fresh limit.
        assert.equal((await app.ask("/", as(""))).status, 429);
        assert.equal((await app.ask("/", as("7"))).status, 200, "other keys are their own");
      });
    });

    it("checks a key longer than the guard takes by its hash: no 500", async () => {
      const guard = await limiter(Limit.perHour(1).burst(1));
      await withApp({ guard, key: tenant }, async (app) => {
        const long = "x".repeat(5_000);
        const first = await app.ask("/", as(long));
        assert.equal(first.status, 200);
        const [key, remaining] = (await first.text()).split("|");
        assert.match(key, /^.sha256:[0-9a-f]{64}$/);
        assert.equal(key[0], "\u0000");
        assert.equal(remaining, "0");
        assert.equal((await app.ask("/", as(long))).status, 429, "the same long key is limited");
      });
    });

    it("hands the decision to the handler, and skips what the predicate says", async () => {
      const guard = await limiter(Limit.perMinute(10).burst(5));
      await withApp({ guard, key: tenant, skip: (path) => path === "/healthz" }, async (app) => {
        assert.equal(await (await app.ask("/", as("7"))).text(), "7|4");
        const skipped = await app.ask("/healthz", as("7"));
        assert.equal(await skipped.text(), "unchecked");
        assert.equal(skipped.headers.get("RateLimit"), null);
        assert.equal(await (await app.ask("/", as("7"))).text(), "7|3", "a skip costs nothing");
        assert.equal(await (await app.ask("/")).text(), "unchecked", "no key: unlimited");
      });
    });

    it("sends draft-10 by default, and Retry-After and t name one moment", async () => {
      const guard = await limiter(Limit.perMinute(2).burst(2));
      await withApp({ guard, key: tenant }, async (app) => {
        const first = await app.ask("/", as("7"));
        assert.equal(first.headers.get("RateLimit-Policy"), '"default";q=2;w=60');
        assert.equal(first.headers.get("RateLimit"), '"default";r=1;t=30');
        await app.ask("/", as("7"));
        const denied = await app.ask("/", as("7"));
        assert.equal(denied.status, 429);
        assert.equal(denied.headers.get("content-type"), "application/problem+json");
        assert.equal(denied.headers.get("Retry-After"), "30");
        // Before: r=0;t=60 beside Retry-After: 30, a t later than the retry.
        assert.equal(denied.headers.get("RateLimit"), '"default";r=0;t=30');
        const problem = await denied.json();
        assert.deepEqual(problem["violated-policies"], ["default"]);
      });
    });

    it("sends draft-7, draft-6 and the legacy trio when asked", async () => {
      const cases: [Options["headers"], Record<string, string | null>][] = [
        ["draft-7", {
          "RateLimit-Policy": "10;w=60",
          RateLimit: "limit=10, remaining=4, reset=6",
          "RateLimit-Remaining": null,
        }],
        ["draft-6", {
          "RateLimit-Policy": "10;w=60",
          "RateLimit-Limit": "10",
          "RateLimit-Remaining": "4",
          "RateLimit-Reset": "6",
          RateLimit: null,
        }],
        [["draft-10", "legacy"], {
          RateLimit: '"default";r=4;t=6',
          "X-RateLimit-Limit": "10",
          "X-RateLimit-Remaining": "4",
          "X-RateLimit-Reset": "6",
        }],
        ["legacy", { "X-RateLimit-Remaining": "4", RateLimit: null, "RateLimit-Policy": null }],
        ["none", { RateLimit: null, "RateLimit-Policy": null, "X-RateLimit-Remaining": null }],
      ];
      for (const [headers, want] of cases) {
        const guard = await limiter(Limit.perMinute(10).burst(5));
        await withApp({ guard, key: tenant, headers }, async (app) => {
          const res = await app.ask("/", as("7"));
          for (const [name, value] of Object.entries(want)) {
            assert.equal(res.headers.get(name), value, `${JSON.stringify(headers)}: ${name}`);
          }
        });
      }
    });

    it("sends no field with headers none, but Retry-After with a denial", async () => {
      const guard = await limiter(Limit.perMinute(1).burst(1));
      await withApp({ guard, key: tenant, headers: "none" }, async (app) => {
        const admitted = await app.ask("/", as("7"));
        assert.equal(admitted.status, 200);
        assert.equal(await admitted.text(), "7|0");
        const denied = await app.ask("/", as("7"));
        assert.equal(denied.status, 429);
        assert.equal(denied.headers.get("Retry-After"), "60");
        for (const res of [admitted, denied]) {
          for (const name of ["RateLimit", "RateLimit-Policy", "X-RateLimit-Remaining"]) {
            assert.equal(res.headers.get(name), null, name);
          }
        }
      });
    });

    it("sends no field saying nothing is left when the limiter failed open", async () => {
      const failing: Limiter = {
        check: () => ({
          allowed: true,
          remaining: 0,
          retryAfterMs: 0,
          resetMs: 0,
          failure: new Error("sidecar down"),
        }),
        limitFor: () => Limit.perMinute(10),
      };
      for (const headers of ["draft-10", "draft-7", "draft-6", "legacy"] as const) {
        await withApp({ guard: failing, key: tenant, headers }, async (app) => {
          const res = await app.ask("/", as("7"));
          assert.equal(res.status, 200);
          // Before: RateLimit: "default";r=0;t=0, as if the client had nothing left.
          for (const name of ["RateLimit", "RateLimit-Remaining", "X-RateLimit-Remaining"]) {
            assert.equal(res.headers.get(name), null, `${headers}: ${name}`);
          }
        });
      }
    });

    it("lets the app restyle a denial, keeping its fields", async () => {
      const guard = await limiter(Limit.perMinute(1).burst(1));
      await withApp({ guard, key: tenant, restyle: "slow down" }, async (app) => {
        await app.ask("/", as("7"));
        const denied = await app.ask("/", as("7"));
        assert.equal(denied.status, 429);
        assert.equal(await denied.text(), "slow down");
        assert.equal(denied.headers.get("Retry-After"), "60");
        assert.equal(denied.headers.get("RateLimit"), '"default";r=0;t=60');
      });
    });
  });
}

describe("what every adapter shares", () => {
  it("checks a class name too long for the guard by its hash: an unknown class, no 500", async () => {
    const guard = await Guard.builder().limit(10).spawn();
    const limiting = new RequestLimiter<[string]>(
      {
        guard,
        key: (plan) => ({ key: "tenant:7", class: plan }),
      },
      "test",
      1,
    );
    const info = await limiting.decide("p".repeat(5_000));
    assert.equal(info?.decision.allowed, true);
    assert.match(info!.class, /^.sha256:[0-9a-f]{64}$/);
    assert.equal(guard.stats().unknownClass, 1, "held to the default limit, and counted");
    assert.equal((await limiting.decide(""))?.class, "", "the default class stays itself");
  });

  it("hands each option function as many arguments as the adapter has, no more", async () => {
    const guard = await Guard.builder().limit(10).spawn();
    for (const arity of [1, 2] as const) {
      const counts: number[] = [];
      const count = <R>(r: R) =>
        function (this: unknown, ...args: unknown[]) {
          counts.push(args.length);
          return r;
        };
      const limiting = new RequestLimiter<[string, string?]>(
        {
          guard,
          key: count("tenant:7"),
          cost: count(1),
          skip: count(false),
        },
        "test",
        arity,
      );
      const info = await limiting.decide("a", arity === 2 ? "b" : undefined);
      assert.equal(info?.key, "tenant:7");
      assert.deepEqual(counts, [arity, arity, arity], `skip, key and cost, of ${arity}`);
    }
  });
});
