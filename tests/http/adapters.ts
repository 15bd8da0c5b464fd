// Test support: the three adapters (Hono, fetch, Express) behind one face,
// so that one suite holds each to the same options, fields and answers.
import { Hono } from "hono";
import type { AddressInfo } from "node:net";
import { rateLimit as honoLimit, type RateLimitEnv } from "../../src/http/hono.ts";
import { withRateLimit } from "../../src/http/fetch.ts";
import type { RateLimitInfo } from "../../src/http/limiting.ts";
import type { HeaderStyle } from "../../src/http/field_style.ts";
import type { Limiter } from "../../src/http/limiting.ts";

/** The options the suite gives every adapter, over a header reader. */
export interface Options {
  readonly guard: Limiter;
  readonly key: (header: (name: string) => string | undefined) => string | undefined;
  readonly headers?: HeaderStyle | boolean;
  readonly skip?: (path: string) => boolean;
  /** Restyle a denial: the body the app sends instead, with its fields kept. */
  readonly restyle?: string;
}

/** An app on one adapter: requests, and a way to stop it. */
export interface App {
  ask(path?: string, headers?: Record<string, string>): Promise<Response>;
  close(): Promise<void>;
}

/** What every app's handler answers: what was decided, for the suite to read. */
const said = (info: RateLimitInfo | undefined) =>
  info === undefined ? "unchecked" : `${info.key}|${info.decision.remaining}`;

export interface Adapter {
  readonly name: string;
  make(options: Options): Promise<App>;
}

const hono: Adapter = {
  name: "hono",
  make(o) {
    const app = new Hono<RateLimitEnv>();
    app.use(honoLimit({
      guard: o.guard,
      key: (c) => o.key((n) => c.req.header(n)),
      headers: o.headers,
      skip: o.skip && ((c) => o.skip!(c.req.path)),
    }));
    if (o.restyle !== undefined) {
      app.onError((err, c) => {
        const res = (err as { getResponse?: () => Response }).getResponse?.();
        if (res === undefined) throw err;
        return c.text(o.restyle!, 429, Object.fromEntries(res.headers));
      });
    }
    app.get("/*", (c) => c.text(said(c.get("rateLimit"))));
    return Promise.resolve({
      ask: (path = "/", headers = {}) => Promise.resolve(app.request(path, { headers })),
      close: () => Promise.resolve(),
    });
  },
};

const fetchAdapter: Adapter = {
  name: "fetch",
  make(o) {
    const handler = withRateLimit({
      guard: o.guard,
      key: (request) => o.key((n) => request.headers.get(n) ?? undefined),
      headers: o.headers,
      skip: o.skip && ((request) => o.skip!(new URL(request.url).pathname)),
      onDenied: o.restyle === undefined
        ? undefined
        : (_info, res) => new Response(o.restyle, { status: 429, headers: res.headers }),
    }, (_request, _info, limited) => new Response(said(limited)));
    return Promise.resolve({
      ask: (path = "/", headers = {}) =>
        Promise.resolve(handler(new Request(`http://localhost${path}`, { headers }), undefined)),
      close: () => Promise.resolve(),
    });
  },
};

const express: Adapter = {
  name: "express",
  // The real package, on every runtime (Deno runs it through its node:http).
  async make(o) {
    const { default: express } = await import("express");
    const { expressRateLimit } = await import("../../src/http/express.ts");
    const app = express();
    app.use(expressRateLimit({
      guard: o.guard,
      key: (req) => o.key((n) => req.get(n)),
      headers: o.headers,
      skip: o.skip && ((req) => o.skip!(req.path)),
      onDenied: o.restyle === undefined
        ? undefined
        : (_info, _req, res) => void res.status(429).type("text/plain").send(o.restyle),
    }));
    app.use((_req, res) => void res.type("text/plain").send(said(res.locals.rateLimit)));
    const server = app.listen(0, "127.0.0.1");
    await new Promise((resolve, reject) => {
      server.once("listening", resolve);
      server.once("error", reject);
    });
    const { port } = server.address() as AddressInfo;
    return {
      ask: (path = "/", headers = {}) => fetch(`http://127.0.0.1:${port}${path}`, { headers }),
      close: () =>
        new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections?.();
        }),
    };
  },
};

/** Every adapter, each with whether it runs here. */
export const ADAPTERS: readonly Adapter[] = [hono, fetchAdapter, express];
