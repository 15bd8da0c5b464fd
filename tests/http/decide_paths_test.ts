// Every way a request is decided, through each adapter: what the option
// functions and the limiter answer at once is decided at once, what they
// answer as promises through them, and both give the same responses; an
// error of either kind goes where the framework sends errors.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import type { AddressInfo } from "node:net";
import type { ErrorRequestHandler } from "express";
import { Hono } from "hono";
import { Guard, Limit } from "../../mod.ts";
import { type Limiter, RequestLimiter } from "../../src/http/limiting.ts";
import { rateLimit, type RateLimitEnv } from "../../src/http/hono.ts";
import { withRateLimit } from "../../src/http/fetch.ts";

/** The header a request names its key in. */
type Header = (name: string) => string | null | undefined;

/** The option functions, over a header reader, answering at once or as promises. */
function functions(async: boolean) {
  const as = <T>(value: T): T | Promise<T> => async ? Promise.resolve(value) : value;
  return {
    key: (h: Header) => as(h("x-tenant") ?? undefined),
    skip: (h: Header) => as(h("x-skip") !== null && h("x-skip") !== undefined),
    cost: (h: Header) => as(Number(h("x-cost") ?? 1)),
  };
}

/** A guard of 5 at once, deciding at once or through a promise as a sidecar client does. */
async function limiter(async: boolean): Promise<{ guard: Guard; limiter: Limiter }> {
  const limit = Limit.perMinute(10).burst(5);
  const guard = await Guard.builder().defaultLimit(limit).spawn();
  return {
    guard,
    limiter: {
      check: (key, o) => async ? Promise.resolve(guard.check(key, o)) : guard.check(key, o),
      limitFor: () => limit,
      maxKeyBytes: () => guard.maxKeyBytes(),
    },
  };
}

/** What a sequence of requests is answered: status, fields and body of each. */
async function answers(ask: (headers: Record<string, string>) => Promise<Response>) {
  const requests: Record<string, string>[] = [
    {},
    { "x-tenant": "7", "x-skip": "1" },
    { "x-tenant": "7" },
    { "x-tenant": "7", "x-cost": "3" },
    { "x-tenant": "x".repeat(5_000) },
    { "x-tenant": "7" },
    { "x-tenant": "7" },
    { "x-tenant": "" },
  ];
  const out = [];
  for (const headers of requests) {
    const res = await ask(headers);
    out.push([
      res.status,
      res.headers.get("RateLimit-Policy"),
      res.headers.get("RateLimit"),
      res.headers.get("Retry-After"),
      await res.text(),
    ]);
  }
  return out;
}

/** The adapters, each over a header reader, for one run of {@link answers}. */
const ADAPTERS = {
  hono: async (limiter: Limiter, async: boolean, ask: (a: typeof fetch) => Promise<unknown>) => {
    const f = functions(async);
    const app = new Hono<RateLimitEnv>();
    const h = (c: { req: { header(n: string): string | undefined } }) => (n: string) =>
      c.req.header(n);
    app.use(rateLimit({
      guard: limiter,
      key: (c) => f.key(h(c)),
      skip: (c) => f.skip(h(c)),
      cost: (c) => f.cost(h(c)),
    }));
    app.get("/", (c) => c.text(`${c.get("rateLimit")?.decision.remaining ?? "unchecked"}`));
    await ask((_url, init) => Promise.resolve(app.request("/", init)));
  },
  fetch: async (limiter: Limiter, async: boolean, ask: (a: typeof fetch) => Promise<unknown>) => {
    const f = functions(async);
    const handler = withRateLimit({
      guard: limiter,
      key: (r) => f.key((n) => r.headers.get(n)),
      skip: (r) => f.skip((n) => r.headers.get(n)),
      cost: (r) => f.cost((n) => r.headers.get(n)),
    }, (_r, _i, info) => new Response(`${info?.decision.remaining ?? "unchecked"}`));
    await ask((_url, init) => Promise.resolve(handler(new Request("http://localhost/", init))));
  },
  express: async (limiter: Limiter, async: boolean, ask: (a: typeof fetch) => Promise<unknown>) => {
    const f = functions(async);
    const { default: express } = await import("express");
    const { expressRateLimit } = await import("../../src/http/express.ts");
    const app = express();
    app.use(expressRateLimit({
      guard: limiter,
      key: (req) => f.key((n) => req.get(n)),
      skip: (req) => f.skip((n) => req.get(n)),
      cost: (req) => f.cost((n) => req.get(n)),
    }));
    app.get("/", (_req, res) => {
      res.type("text/plain").send(`${res.locals.rateLimit?.decision.remaining ?? "unchecked"}`);
    });
    const server = app.listen(0, "127.0.0.1");
    await new Promise((resolve) => server.once("listening", resolve));
    const { port } = server.address() as AddressInfo;
    try {
      await ask((_url, init) => fetch(`http://127.0.0.1:${port}/`, init));
    } finally {
      server.closeAllConnections?.();
      await new Promise((resolve) => server.close(resolve));
    }
  },
};

describe("deciding at once and through promises", () => {
  for (const [name, run] of Object.entries(ADAPTERS)) {
    it(`gives the same answers either way: ${name}`, async () => {
      const runs = [];
      for (
        const [fnAsync, checkAsync] of [[false, false], [true, false], [false, true], [
          true,
          true,
        ]]
      ) {
        const { limiter: l } = await limiter(checkAsync);
        let got: unknown;
        await run(l, fnAsync, async (f) => {
          got = await answers((headers) => f("/", { headers }));
        });
        runs.push(got);
      }
      // The same admissions, denials, fields and bodies, however each part answered.
      for (const other of runs.slice(1)) assert.deepEqual(other, runs[0]);
      const statuses = (runs[0] as unknown[][]).map((r) => r[0]);
      assert.deepEqual(statuses, [200, 200, 200, 200, 200, 200, 429, 200]);
      const bodies = (runs[0] as unknown[][]).map((r) => r[4]);
      // The long key is checked by its hash, a key of its own; the 7th request finds none left.
      assert.deepEqual(bodies.slice(0, 6), ["unchecked", "unchecked", "4", "1", "4", "0"]);
    });
  }

  it("decides at once when nothing answers a promise, and through one when anything does", async () => {
    const { limiter: now } = await limiter(false);
    const { limiter: later } = await limiter(true);
    const f = functions(false), g = functions(true);
    const h: Header = (n) => n === "x-tenant" ? "7" : null;
    const at = (l: Limiter, fs: ReturnType<typeof functions>) =>
      new RequestLimiter<[Header]>(
        { guard: l, key: fs.key, skip: fs.skip, cost: fs.cost },
        "test",
        1,
      );
    const sync = at(now, f).decide(h);
    assert(!(sync instanceof Promise), "a Guard and plain functions decide at once");
    assert.equal(sync?.decision.remaining, 4);
    for (const [l, fs] of [[later, f], [(await limiter(false)).limiter, g]] as const) {
      const decided = at(l, fs).decide(h);
      assert(decided instanceof Promise);
      assert.equal((await decided)?.decision.remaining, 4);
    }
    // A key too long waits for its digest, even when everything else answered at once.
    const long = at(now, f).decide((n) => n === "x-tenant" ? "y".repeat(5_000) : null);
    assert(long instanceof Promise);
    assert.match((await long)!.key, /^.sha256:[0-9a-f]{64}$/);
  });

  it("admits past the limit on a dry run, and decides by the limit, not the shadow", async () => {
    const { guard, limiter: l } = await limiter(false);
    guard.setDryRun(true);
    const app = new Hono();
    app.use(rateLimit({ guard: l, key: () => "7" }));
    app.get("/", (c) => c.text("ok"));
    for (let i = 0; i < 8; i++) assert.equal((await app.request("/")).status, 200);
    guard.setDryRun(false);
    guard.setShadow("", Limit.perMinute(1).burst(1));
    const shadowed = new Hono();
    shadowed.use(rateLimit({ guard: l, key: () => "8" }));
    shadowed.get("/", (c) => c.text("ok"));
    for (let i = 0; i < 5; i++) {
      const res = await shadowed.request("/");
      assert.equal(res.status, 200, "the shadow only counts");
      assert.equal(res.headers.get("RateLimit"), `"default";r=${4 - i};t=${(i + 1) * 6}`);
    }
    assert.equal((await shadowed.request("/")).status, 429);
  });
});

describe("an error of a key function or the limiter", () => {
  const boom = new Error("boom");
  const throwing = {
    "throws": (): string => {
      throw boom;
    },
    "rejects": (): Promise<string> => Promise.reject(boom),
  };
  for (const [how, key] of Object.entries(throwing)) {
    it(`goes to Hono's onError, to the fetch caller and to Express's next when it ${how}`, async () => {
      const { limiter: l } = await limiter(false);
      const app = new Hono();
      app.use(rateLimit({ guard: l, key }));
      app.get("/", (c) => c.text("ok"));
      let seen: unknown;
      app.onError((err, c) => {
        seen = err;
        return c.text("handled", 503);
      });
      const res = await app.request("/");
      assert.equal(res.status, 503);
      assert.equal(seen, boom);
      // A limiter that fails is the same: a sidecar client set to throw, say.
      const failing = new Hono();
      failing.use(rateLimit({ guard: { check: () => key() as never }, key: () => "k" }));
      failing.get("/", (c) => c.text("ok"));
      failing.onError((err, c) => c.text(err === boom ? "handled" : "other", 503));
      assert.equal(await (await failing.request("/")).text(), "handled");

      const handler = withRateLimit({ guard: l, key }, () => new Response("ok"));
      await assert.rejects(
        Promise.resolve(handler(new Request("http://localhost/"))),
        (e) => e === boom,
      );

      const { default: express } = await import("express");
      const { expressRateLimit } = await import("../../src/http/express.ts");
      const ex = express();
      ex.use(expressRateLimit({ guard: l, key }));
      ex.get("/", (_req, r) => void r.send("ok"));
      let handed: unknown;
      const onError: ErrorRequestHandler = (err, _req, r, _next) => {
        handed = err;
        r.status(503).send("handled");
      };
      ex.use(onError);
      const server = ex.listen(0, "127.0.0.1");
      await new Promise((resolve) => server.once("listening", resolve));
      try {
        const { port } = server.address() as AddressInfo;
        const got = await fetch(`http://127.0.0.1:${port}/`);
        assert.equal(got.status, 503);
        assert.equal(await got.text(), "handled");
        assert.equal(handed, boom);
      } finally {
        server.closeAllConnections?.();
        await new Promise((resolve) => server.close(resolve));
      }
    });
  }
});
