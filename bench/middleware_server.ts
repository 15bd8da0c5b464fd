// One server of the middleware benchmark: the apps of middleware_apps.ts
// for one stack, on the runtime's own server (Deno.serve, Bun.serve, or
// @hono/node-server on Node) for Hono and fetch, on node:http for Express.
//   --stack hono|fetch|express
// Prints "listening on http://127.0.0.1:port" once it serves.
import process from "node:process";
import type { AddressInfo } from "node:net";
import { parseArgs } from "node:util";
import { benchGuard, expressApp, fetchHandler, honoApp } from "./middleware_apps.ts";

type Fetch = (request: Request, info?: unknown) => Response | Promise<Response>;
const runtime = globalThis as unknown as {
  Deno?: {
    serve(
      options: { hostname: string; port: number; onListen(addr: { port: number }): void },
      handler: Fetch,
    ): unknown;
  };
  Bun?: { serve(options: { hostname: string; port: number; fetch: Fetch }): { port: number } };
};

const { values } = parseArgs({ options: { stack: { type: "string" } } });
const guard = await benchGuard();

/** Serves `fetch` on the runtime's native server; resolves to its port. */
async function serveNative(fetch: Fetch): Promise<number> {
  if (runtime.Deno) {
    const deno = runtime.Deno;
    return await new Promise((resolve) => {
      deno.serve({ hostname: "127.0.0.1", port: 0, onListen: (a) => resolve(a.port) }, fetch);
    });
  }
  if (runtime.Bun) return runtime.Bun.serve({ hostname: "127.0.0.1", port: 0, fetch }).port;
  const { serve } = await import("@hono/node-server");
  return await new Promise((resolve) => {
    serve({ fetch, hostname: "127.0.0.1", port: 0 }, (a) => resolve(a.port));
  });
}

let port: number;
if (values.stack === "hono") {
  const app = honoApp(guard);
  port = await serveNative((request, info) => app.fetch(request, info));
} else if (values.stack === "fetch") {
  port = await serveNative(fetchHandler(guard));
} else if (values.stack === "express") {
  const server = expressApp(guard).listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  port = (server.address() as AddressInfo).port;
} else {
  console.error("--stack hono|fetch|express");
  process.exit(2);
}
console.log(`listening on http://127.0.0.1:${port}`);
process.on("SIGTERM", () => process.exit(0));
