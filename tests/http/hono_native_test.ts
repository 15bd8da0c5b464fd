// The Hono middleware over a real socket, on the server each runtime ships:
// Deno.serve on Deno, Bun.serve on Bun, @hono/node-server on Node. The same
// app is served bare and limited, and every response must come out the same
// but for the RateLimit fields: a server fills in defaults (a content-type
// for a string body, say) only once it writes the response, so what an
// in-process `app.request` shows is not what a client gets.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { type Context, Hono } from "hono";
import { stream, streamText } from "hono/streaming";
import { Guard, Limit } from "../../mod.ts";
import { QUOTA_EXCEEDED, rateLimit } from "../../src/http/hono.ts";

type Fetch = (request: Request) => Response | Promise<Response>;

/** A server on 127.0.0.1: where it is, and how to stop it. */
interface Served {
  readonly origin: string;
  close(): Promise<void>;
}

/** The two native servers, seen through globalThis (a bare `Bun` breaks `deno publish`). */
const native = globalThis as unknown as {
  Deno?: {
    serve(
      options: { hostname: string; port: number; onListen?: () => void },
      handler: Fetch,
    ): { addr: { port: number }; shutdown(): Promise<void> };
  };
  Bun?: {
    serve(options: { hostname: string; port: number; fetch: Fetch }): {
      port: number;
      stop(force?: boolean): void | Promise<void>;
    };
  };
};

const serverName = native.Deno ? "Deno.serve" : native.Bun ? "Bun.serve" : "@hono/node-server";

async function serveNative(fetch: Fetch): Promise<Served> {
  const hostname = "127.0.0.1";
  if (native.Deno) {
    const server = native.Deno.serve({ hostname, port: 0, onListen: () => {} }, fetch);
    return { origin: `http://${hostname}:${server.addr.port}`, close: () => server.shutdown() };
  }
  if (native.Bun) {
    const server = native.Bun.serve({ hostname, port: 0, fetch });
    return {
      origin: `http://${hostname}:${server.port}`,
      close: async () => await server.stop(true),
    };
  }
  const { serve } = await import("@hono/node-server");
  return await new Promise<Served>((resolve) => {
    const server = serve({ fetch, hostname, port: 0 }, (info) => {
      resolve({
        origin: `http://${hostname}:${info.port}`,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            (server as { closeAllConnections?: () => void }).closeAllConnections?.();
          }),
      });
    });
  });
}

/**
 * @hono/node-server, once loaded in this process (other files of the suite
 * serve through it), puts its own Response class over the global one, and
 * Hono builds responses from the global. Deno.serve and Bun.serve take only
 * their own, which that class extends: a Deno or Bun app never loads it, so
 * its own class is put back while these tests run.
 */
function withNativeResponse(): () => void {
  const current = Object.getOwnPropertyDescriptor(globalThis, "Response");
  const own = Object.getPrototypeOf(globalThis.Response) as typeof Response;
  if (native.Deno === undefined && native.Bun === undefined) return () => {};
  if (current === undefined || own === (Function.prototype as unknown)) return () => {};
  // Defined, not assigned: on Deno that class is put there read-only.
  const put = (d: PropertyDescriptor) => Object.defineProperty(globalThis, "Response", d);
  put({ value: own, writable: true, configurable: true });
  return () => put(current);
}

/** The routes: every way a handler makes a response, with what its type must be. */
const routes: Record<string, RegExp | undefined> = {
  "/text": /^text\/plain; ?charset=utf-8$/i,
  "/json": /^application\/json\b/,
  "/html": /^text\/html; charset=utf-8$/i,
  "/stream-text": /^text\/plain; ?charset=utf-8$/i,
  // No type given: whatever the server says of bytes, the same either way.
  "/stream-bytes": undefined,
  "/own": /^text\/csv; charset=utf-8$/,
  // Responses of the runtime, their type left to the runtime.
  "/raw": /^text\/plain; ?charset=utf-8$/i,
  // Headers that cannot be written to: the fields go on a copy.
  "/moved": undefined,
  // @hono/node-server sends a Blob as text/plain, bare or not (its own
  // Response types it so): only Deno and Bun send the Blob's type.
  "/blob": serverName === "@hono/node-server" ? undefined : /^image\/png$/,
};

function app(limited: Guard | undefined): Hono {
  const app = new Hono();
  if (limited !== undefined) {
    // One key per route and caller, so that each test spends its own.
    const key = (c: Context) => `${c.req.path}|${c.req.query("who") ?? ""}`;
    app.use(rateLimit({ guard: limited, key }));
  }
  app.get("/text", (c) => c.text("plain words\n"));
  app.get("/json", (c) => c.json({ words: ["plain", "json"] }));
  app.get("/html", (c) => c.html("<p>plain html</p>"));
  app.get("/stream-text", (c) =>
    streamText(c, async (s) => {
      await s.write("first chunk, ");
      await s.write("second chunk\n");
    }));
  app.get("/stream-bytes", (c) =>
    stream(c, async (s) => {
      await s.write(new Uint8Array([1, 2, 3]));
    }));
  app.get("/own", (c) => {
    c.header("x-own", "kept");
    c.header("content-type", "text/csv; charset=utf-8");
    c.header("cache-control", "no-store");
    return c.body("a,b\n1,2\n", 201);
  });
  app.get("/raw", () => new Response("raw words\n", { status: 202, headers: { "x-own": "raw" } }));
  app.get("/moved", () => Response.redirect("http://127.0.0.1:9/elsewhere", 302));
  app.get(
    "/blob",
    () => new Response(new Blob([new Uint8Array([137, 80, 78, 71])], { type: "image/png" })),
  );
  return app;
}

/** What a client sees of a response, less the fields a server stamps on each. */
async function seen(res: Response) {
  const headers = [...res.headers]
    .filter(([name]) =>
      !["date", "content-length", "transfer-encoding", "keep-alive", "connection"].includes(name)
    )
    .filter(([name]) => !/^(x-)?ratelimit/i.test(name) && name !== "retry-after");
  return { status: res.status, headers, body: [...new Uint8Array(await res.arrayBuffer())] };
}

describe(`Hono middleware on ${serverName}`, () => {
  let bare: Served;
  let limited: Served;
  let guard: Guard;
  let restore: () => void;

  before(async () => {
    restore = withNativeResponse();
    // Two requests admitted per route in an hour: the second is at the limit.
    guard = await Guard.builder().defaultLimit(Limit.perHour(2).burst(2)).spawn();
    bare = await serveNative(app(undefined).fetch);
    limited = await serveNative(app(guard).fetch);
  });
  after(async () => {
    await bare?.close();
    await limited?.close();
    await guard?.leave();
    restore?.();
  });

  const ask = (served: Served, path: string) =>
    fetch(`${served.origin}${path}`, { redirect: "manual", signal: AbortSignal.timeout(10_000) });

  it("keeps every response's type, body, status and headers, allowed and at the limit", async () => {
    for (const [path, type] of Object.entries(routes)) {
      const expected = await seen(await ask(bare, path));
      const typeOf = (s: typeof expected) => s.headers.find(([n]) => n === "content-type")?.[1];
      if (path === "/raw" && typeOf(expected) === undefined && serverName === "@hono/node-server") {
        // @hono/node-server's own Response, given a string and a plain record
        // of headers, is sent with no type at all until something reads its
        // headers; then with the Fetch standard's text/plain, as on Deno and
        // Bun. Any middleware that writes a field reads them.
        expected.headers = [["content-type", "text/plain; charset=UTF-8"], ...expected.headers];
      }
      if (type !== undefined) {
        assert.match(typeOf(expected) ?? "", type, `${path} on ${serverName}`);
      }
      for (const remaining of [1, 0]) {
        const res = await ask(limited, path);
        assert.equal(res.headers.get("RateLimit-Policy"), '"default";q=2;w=3600', path);
        assert.match(
          res.headers.get("RateLimit") ?? "",
          new RegExp(`^"default";r=${remaining};t=`),
        );
        assert.deepEqual(await seen(res), expected, `${path} with ${remaining} left`);
      }
    }
  });

  it("denies with a problem of type quota-exceeded, its fields and Retry-After", async () => {
    for (const route of Object.keys(routes)) {
      const path = `${route}?who=denied`;
      for (let i = 0; i < 2; i++) {
        const admitted = await ask(limited, path);
        await admitted.arrayBuffer();
        assert.ok(admitted.status < 400, path);
      }
      const res = await ask(limited, path);
      assert.equal(res.status, 429, path);
      assert.equal(res.headers.get("content-type"), "application/problem+json", path);
      assert.match(res.headers.get("Retry-After") ?? "", /^\d+$/);
      assert.match(res.headers.get("RateLimit") ?? "", /^"default";r=0;t=\d+$/);
      assert.equal(res.headers.get("x-own"), null, "a denial is not the handler's");
      const problem = await res.json();
      assert.equal(problem.type, QUOTA_EXCEEDED);
      assert.equal(problem.status, 429);
    }
  });
});
