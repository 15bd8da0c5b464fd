import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Guard, Limit } from "../../mod.ts";
import { sidecarApp } from "../../src/http/sidecar.ts";
import { parseSidecarArgs, UsageError } from "../../src/http/cli_args.ts";

const app = async (maxKeyBytes?: number) => {
  let b = Guard.builder().defaultLimit(Limit.perHour(2).burst(2));
  if (maxKeyBytes !== undefined) b = b.maxKeyBytes(maxKeyBytes);
  const guard = await b.spawn();
  return { guard, app: sidecarApp(guard) };
};
const bytes = (...parts: (string | number[])[]) => {
  const out: number[] = [];
  for (const p of parts) out.push(...(typeof p === "string" ? new TextEncoder().encode(p) : p));
  return new Uint8Array(out);
};
const post = (body: BodyInit, chunked = false) => ({
  method: "POST",
  body: chunked ? new Blob([body as Uint8Array<ArrayBuffer>]).stream() : body,
  headers: { "content-type": "application/json" },
  ...(chunked ? { duplex: "half" } : {}),
});

describe("sidecar keys", () => {
  it("invalid UTF-8 in a body is a 400, never a lossy decode into one key", async () => {
    for (const chunked of [false, true]) {
      const { app: a, guard } = await app();
      for (const byte of [0xe1, 0xe2, 0xe3, 0xff, 0xfe]) {
        const res = await a.request(
          "/v1/check",
          post(bytes('{"key": "', [byte], '"}'), chunked) as RequestInit,
        );
        assert.equal(res.status, 400, `byte ${byte.toString(16)}, chunked ${chunked}`);
        const problem = await res.json();
        assert.match(problem.detail, /UTF-8/);
      }
      assert.equal(guard.stats().trackedKeys, 0, "nothing was checked");
    }
  });

  it("a key longer than the limit is a 400 naming /key, in a check and in a batch", async () => {
    const { app: a, guard } = await app(8);
    const check = await a.request("/v1/check", post('{"key": "123456789"}'));
    assert.equal(check.status, 400);
    const p = await check.json();
    assert.equal(p.field, "/key");
    assert.match(p.detail, /8 bytes/);
    const batch = await a.request(
      "/v1/check-all",
      post('{"items": [{"key": "ok"}, {"key": "123456789"}]}'),
    );
    assert.equal(batch.status, 400);
    assert.equal((await batch.json()).field, "/items/1/key");
    const peek = await a.request("/v1/peek?key=123456789");
    assert.equal(peek.status, 400);
    assert.equal((await peek.json()).field, "/query/key");
    const cls = await a.request("/v1/check", post('{"key": "k", "class": "123456789"}'));
    assert.equal(cls.status, 400);
    assert.equal((await cls.json()).field, "/class");
    assert.equal(guard.stats().trackedKeys, 0);
    assert.equal((await a.request("/v1/check", post('{"key": "12345678"}'))).status, 200);
  });

  it("names the field of a key or class too long on every route that takes one", async () => {
    const { app: a, guard } = await app(8);
    const long = "123456789";
    const put = (body: unknown) => ({ method: "PUT", body: JSON.stringify(body) });
    const cases: Array<[string, RequestInit | undefined, string]> = [
      [`/v1/peek?key=k&class=${long}`, undefined, "/query/class"],
      [
        "/v1/check-all",
        post(`{"items": [{"key": "a"}, {"key": "b", "class": "${long}"}]}`),
        "/items/1/class",
      ],
      ["/v1/refund", post(`{"key": "${long}"}`), "/key"],
      ["/v1/reset", post(`{"key": "k", "class": "${long}"}`), "/class"],
      ["/v1/block", post(`{"key": "${long}", "ms": 1000}`), "/key"],
      [`/v1/keys?key=${long}`, undefined, "/query/key"],
      [`/v1/key-limits?key=${long}`, put({ limit: "1/s" }), "/query/key"],
      [
        "/v1/key-limits",
        put({ keyLimits: [{ key: "a", limit: "1/s" }, { key: long, limit: "1/s" }] }),
        "/keyLimits/1/key",
      ],
    ];
    for (const [path, init, field] of cases) {
      const res = await a.request(path, init);
      assert.equal(res.status, 400, path);
      const problem = await res.json();
      assert.equal(problem.field, field, path);
      assert.match(problem.detail, /^a (key|class name) is at most 8 bytes of UTF-8/, path);
    }
    assert.equal(guard.stats().trackedKeys, 0);
    assert.deepEqual(guard.keyLimits(), []);
  });

  it("JSON escapes of lone surrogates make keys of their own, with hashes of their own", async () => {
    const { app: a, guard } = await app();
    for (const k of ["\\ud800", "\\ud801", "\\udc00"]) {
      const res = await a.request("/v1/check", post(`{"key": "${k}"}`));
      assert.equal(res.status, 200);
      assert.equal((await res.json()).remaining, 1, `${k} is a key of its own`);
    }
    assert.equal(guard.stats().trackedKeys, 3);
    // What would travel on the wire, and what mostDenied names them by.
    const hashes = ["\ud800", "\ud801", "\udc00"].map((k) => guard.keyHash(k));
    assert.equal(new Set(hashes).size, 3);
  });
});

describe("--max-key-bytes", () => {
  const parse = (...argv: string[]) => parseSidecarArgs(["--limit", "10/s", ...argv], {});
  it("sets the limit, 1024 by default, also from RATEGUARD_MAX_KEY_BYTES", () => {
    const run = (p: ReturnType<typeof parse>) => p.kind === "run" ? p.config.maxKeyBytes : -1;
    assert.equal(run(parse()), 1_024);
    assert.equal(run(parse("--max-key-bytes", "256")), 256);
    assert.equal(
      run(parseSidecarArgs(["--limit", "10/s"], { RATEGUARD_MAX_KEY_BYTES: "64" })),
      64,
    );
  });
  it("refuses a bad value on one line naming the flag", () => {
    for (const bad of ["0", "65537", "1.5", "lots", "-3"]) {
      assert.throws(
        () => parse(`--max-key-bytes=${bad}`),
        (e: unknown) =>
          e instanceof UsageError && e.message.startsWith("--max-key-bytes") &&
          !e.message.includes("\n"),
        bad,
      );
    }
  });
});

describe("--hot-keys", () => {
  it("is refused outside 1 to 64 when the command line is read, naming the flag", () => {
    for (const bad of ["0", "65", "70", "100"]) {
      assert.throws(
        () => parseSidecarArgs(["--limit", "10/s", `--hot-keys=${bad}`], {}),
        (e: unknown) =>
          e instanceof UsageError &&
          e.message === `--hot-keys: expected a whole number from 1 to 64, got ${bad}`,
        bad,
      );
    }
  });
});
