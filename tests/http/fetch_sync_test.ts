// The fetch helper answers at once what was decided at once: with a
// synchronous key function, guard and handler it hands the server a
// Response, not a promise of one (the native servers write such a response
// sooner); where any of them answers a promise, it answers one; whatever
// throws on the way is a rejected promise, never a throw from the call.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Guard, Limit } from "../../mod.ts";
import { withRateLimit } from "../../src/http/fetch.ts";

const ask = () => new Request("http://localhost/", { headers: { "x-tenant": "7" } });
const key = (request: Request) => request.headers.get("x-tenant") ?? undefined;

test("sync key, guard and handler: a Response, with the fields; a denial too", async () => {
  const guard = await Guard.builder().defaultLimit(Limit.perMinute(60).burst(1)).spawn();
  try {
    const handler = withRateLimit({ guard, key }, () => new Response("ok"));
    const admitted = handler(ask());
    assert.ok(admitted instanceof Response, "admitted at once");
    assert.equal(admitted.status, 200);
    assert.ok(admitted.headers.get("ratelimit") !== null, "the fields are on it");
    const denied = handler(ask());
    assert.ok(denied instanceof Response, "denied at once");
    assert.equal(denied.status, 429);
    const skipped = handler(new Request("http://localhost/"));
    assert.ok(skipped instanceof Response, "no key: handed on at once");
  } finally {
    await guard.leave();
  }
});

test("an async handler or key function: a promise of the same answer", async () => {
  const guard = await Guard.builder().defaultLimit(Limit.perMinute(60).burst(5)).spawn();
  try {
    const slow = withRateLimit({ guard, key }, async () => {
      await null;
      return new Response("ok");
    });
    const answer = slow(ask());
    assert.ok(answer instanceof Promise);
    const res = await answer;
    assert.equal(res.status, 200);
    assert.ok(res.headers.get("ratelimit") !== null);
    const asyncKey = withRateLimit(
      { guard, key: (r: Request) => Promise.resolve(key(r)) },
      () => new Response("ok"),
    );
    const keyed = asyncKey(ask());
    assert.ok(keyed instanceof Promise);
    assert.equal((await keyed).status, 200);
  } finally {
    await guard.leave();
  }
});

test("a throw in the handler or the key function is a rejected promise, not a throw", async () => {
  const guard = await Guard.builder().defaultLimit(Limit.perMinute(60).burst(5)).spawn();
  try {
    const broken = withRateLimit({ guard, key }, () => {
      throw new Error("handler broke");
    });
    const answer = broken(ask());
    assert.ok(answer instanceof Promise, "not thrown from the call");
    await assert.rejects(answer, /handler broke/);
    const badKey = withRateLimit({
      guard,
      key: () => {
        throw new Error("key broke");
      },
    }, () => new Response("ok"));
    await assert.rejects(Promise.resolve(badKey(ask())), /key broke/);
  } finally {
    await guard.leave();
  }
});
