import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Hono } from "hono";
import { Guard, Limit } from "../../mod.ts";
import { type Limiter, QUOTA_EXCEEDED, rateLimit } from "../../src/http/hono.ts";
import { ceilSeconds, retryAfterSeconds, sfString } from "../../src/http/fields.ts";
import { start } from "../support/process.ts";
import { Buffer } from "node:buffer";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A guard that also tells its limits, as `Limiter.limitFor` allows. */
async function limiter(limit: Limit, classes: Record<string, Limit> = {}): Promise<Limiter> {
  let b = Guard.builder().defaultLimit(limit);
  for (const [name, l] of Object.entries(classes)) b = b.class(name, l);
  const guard = await b.spawn();
  return {
    check: (key, options) => guard.check(key, options),
    limitFor: (_key, { class: cls }) => cls === "" ? limit : classes[cls],
  };
}

const tenant = (c: { req: { header(name: string): string | undefined } }) =>
  c.req.header("x-tenant");

describe("Hono middleware", () => {
  it("lets a request with no key pass unlimited, with no fields", async () => {
    const app = new Hono();
    app.use(rateLimit({ guard: await limiter(Limit.perHour(1).burst(1)), key: tenant }));
    app.get("/", (c) => c.text("ok"));
    for (let i = 0; i < 3; i++) {
      const res = await app.request("/");
      assert.equal(res.status, 200);
      assert.equal(res.headers.get("RateLimit"), null);
    }
  });

  it("sends RateLimit-Policy and RateLimit, then 429 with Retry-After and a problem", async () => {
    const app = new Hono();
    app.use(rateLimit({ guard: await limiter(Limit.perMinute(2).burst(2)), key: tenant }));
    app.get("/", (c) => c.text("ok"));
    const ask = () => app.request("/", { headers: { "x-tenant": "7" } });
    const first = await ask();
    assert.equal(first.status, 200);
    assert.equal(first.headers.get("RateLimit-Policy"), '"default";q=2;w=60');
    assert.equal(first.headers.get("RateLimit"), '"default";r=1;t=30');
    assert.equal(first.headers.get("Retry-After"), null);
    assert.equal(first.headers.get("X-RateLimit-Remaining"), null);
    await ask();
    const denied = await ask();
    assert.equal(denied.status, 429);
    assert.equal(denied.headers.get("content-type"), "application/problem+json");
    // 30 s per request at 2/min: the next one is admitted in 30 s, whole.
    assert.equal(denied.headers.get("Retry-After"), "30");
    // On a denial t is the Retry-After: the two name one moment.
    assert.equal(denied.headers.get("RateLimit"), '"default";r=0;t=30');
    const problem = await denied.json();
    assert.equal(problem.type, QUOTA_EXCEEDED);
    assert.equal(problem.status, 429);
    assert.deepEqual(problem["violated-policies"], ["default"]);
    assert.match(problem.detail, /: retry in 30 s$/, "the problem says what Retry-After says");
  });

  it("checks in a class, names the policy after it, and sends the legacy trio", async () => {
    const guard = await limiter(Limit.perSecond(1), { pro: Limit.perSecond(100).burst(10) });
    const app = new Hono();
    app.use(
      rateLimit({
        guard,
        key: (c) => ({ key: tenant(c) ?? "anonymous", class: "pro" }),
        headers: "both",
      }),
    );
    app.get("/", (c) => c.text("ok"));
    const res = await app.request("/");
    assert.equal(res.headers.get("RateLimit-Policy"), '"pro";q=100;w=1');
    assert.equal(res.headers.get("RateLimit"), '"pro";r=9;t=1');
    assert.deepEqual(
      ["Limit", "Remaining", "Reset"].map((f) => res.headers.get(`X-RateLimit-${f}`)),
      ["100", "9", "1"],
    );
  });

  it("appends, so that two limiters share a response", async () => {
    const app = new Hono();
    const perIp = await limiter(Limit.perSecond(10).burst(3));
    const perTenant = await limiter(Limit.perMinute(600).burst(1));
    app.use(rateLimit({ guard: perIp, key: () => "ip:1", policy: () => "ip", headers: "both" }));
    app.use(rateLimit({ guard: perTenant, key: tenant, policy: () => "tenant", headers: "both" }));
    app.get("/", (c) => c.text("ok"));
    const ask = () => app.request("/", { headers: { "x-tenant": "7" } });
    const res = await ask();
    assert.equal(res.headers.get("RateLimit-Policy"), '"tenant";q=600;w=60, "ip";q=10;w=1');
    assert.equal(res.headers.get("RateLimit"), '"tenant";r=0;t=1, "ip";r=2;t=1');
    // The legacy fields hold one value: the limiter with the fewest left.
    assert.equal(res.headers.get("X-RateLimit-Remaining"), "0");
    const denied = await ask();
    assert.equal(denied.status, 429);
    // The tenant's denial carries the ip limiter's fields too.
    assert.match(denied.headers.get("RateLimit") ?? "", /^"tenant";r=0;t=\d+, "ip";r=1;t=1$/);
    assert.deepEqual((await denied.json())["violated-policies"], ["tenant"]);
  });

  it("adds its fields to a response whose headers are immutable", async () => {
    const app = new Hono();
    app.use(rateLimit({ guard: await limiter(Limit.perSecond(5)), key: () => "k" }));
    app.get("/", () => Response.redirect("http://127.0.0.1/elsewhere", 302));
    const res = await app.request("/");
    assert.equal(res.status, 302);
    assert.equal(res.headers.get("location"), "http://127.0.0.1/elsewhere");
    assert.equal(res.headers.get("RateLimit"), '"default";r=0;t=1');
  });

  it("works with a plain Guard, a cost, and refuses bad options by name", async () => {
    const guard = await Guard.builder().limit(10).burst(5).spawn();
    const app = new Hono();
    app.use(rateLimit({ guard, key: () => "k", cost: () => 2, headers: "ietf" }));
    app.get("/", (c) => c.text("ok"));
    const res = await app.request("/");
    // A Guard tells the limit a key is held to (limitFor): the policy goes out too.
    assert.match(res.headers.get("RateLimit-Policy") ?? "", /^"default";q=10;w=1\b/);
    assert.equal(res.headers.get("RateLimit"), '"default";r=3;t=1');
    const quiet = new Hono();
    quiet.use(rateLimit({ guard, key: () => "q", headers: false }));
    quiet.get("/", (c) => c.text("ok"));
    assert.equal((await quiet.request("/")).headers.get("RateLimit"), null);
    assert.throws(() => rateLimit({ guard: {} as Limiter, key: () => "k" }), /guard/);
    assert.throws(
      () => rateLimit({ guard, key: () => "k", headers: "all" as "both" }),
      (e) => e instanceof RangeError && /headers/.test(e.message),
    );
  });

  it("rounds whole microseconds up to seconds, exactly, with no slack", () => {
    // A decision's durations are whole microseconds: one more is one more second.
    assert.deepEqual([30_000, 30_000.001, 0, 0.001, 999.999, 1_000].map(ceilSeconds), [
      30,
      31,
      0,
      1,
      1,
      1,
    ]);
    // Retry-After is never 0: that would invite the retry at once.
    assert.deepEqual([30_000, 0.001, 0].map(retryAfterSeconds), [30, 1, 1]);
  });

  it("serializes policy names as RFC 9651 strings", () => {
    assert.equal(sfString("pro"), '"pro"');
    assert.equal(sfString('say "hi" \\ bye'), '"say \\"hi\\" \\\\ bye"');
    assert.equal(sfString("tariff-ü\n"), '"tariff-??"');
  });
});

describe("Hono example app", () => {
  it("imports rateguard by its published name, as an app that copies it does", () => {
    for (const file of readdirSync("examples").filter((f) => f.endsWith(".ts"))) {
      const text = readFileSync(`examples/${file}`, "utf8");
      const specifiers = [...text.matchAll(/^import .* from "([^"]+)";$/gm)].map((m) => m[1]);
      assert.ok(specifiers.includes("@rateguard/guard"), file);
      for (const s of specifiers) {
        assert.match(
          s,
          /^(@rateguard\/guard(\/[a-z]+)?|node:[a-z]+|hono|@hono\/node-server)$/,
          file,
        );
      }
    }
  });

  it("serves, limits and says so, on this runtime", async () => {
    const p = start("examples/hono_app.ts", [], { env: { PORT: "0" } });
    try {
      const [, url] = await p.waitFor(/listening on (http:\/\/\S+)/);
      const statuses: number[] = [];
      let last: Response | undefined;
      for (let i = 0; i < 6; i++) {
        last = await fetch(url, { headers: { "x-tenant": "42" } });
        statuses.push(last.status);
        await last.body?.cancel();
      }
      assert.deepEqual(statuses, [200, 200, 200, 200, 200, 429]);
      assert.equal(last!.headers.get("RateLimit-Policy"), '"default";q=60;w=60');
      assert.equal(last!.headers.get("Retry-After"), "1");
      const pro = await fetch(url, { headers: { "x-tenant": "42", "x-plan": "pro" } });
      assert.equal(pro.status, 200);
      assert.equal(pro.headers.get("RateLimit-Policy"), '"pro";q=100;w=1');
      await pro.body?.cancel();
    } finally {
      p.kill();
    }
  });

  it("gossips signed with the secrets of GOSSIP_SECRET_FILE", async () => {
    const dir = mkdtempSync(join(tmpdir(), "rateguard-example-"));
    const file = join(dir, "gossip-secret");
    writeFileSync(file, Buffer.from(new Uint8Array(32).fill(9)).toString("base64") + "\n");
    const env = { PORT: "0", BIND: "127.0.0.1:0", GOSSIP_SECRET_FILE: file };
    const p = start("examples/hono_app.ts", [], { env });
    try {
      const [, url] = await p.waitFor(/listening on (http:\/\/\S+)/);
      const res = await fetch(url, { headers: { "x-tenant": "7" } });
      assert.equal(res.status, 200);
      await res.body?.cancel();
    } finally {
      p.kill();
      rmSync(dir, { recursive: true });
    }
  });
});
