/**
 * A Hono app limited per tenant with rateguard, served on Deno, Bun or Node:
 *
 * ```sh
 * deno run -A examples/hono_app.ts     # or: bun examples/hono_app.ts, npx tsx examples/hono_app.ts
 * curl -i -H 'x-tenant: 42' http://127.0.0.1:8000/
 * ```
 *
 * Set `PORT` to listen elsewhere (0 picks a free port), and `BIND` plus
 * `SEEDS` to share the limit with other instances over gossip, signed with
 * the secrets of `GOSSIP_SECRET_FILE` (one base64 secret per line, as the
 * sidecar's `--gossip-secret-file`):
 *
 * ```sh
 * openssl rand -base64 32 > gossip-secret   # the same file on every instance
 * BIND=127.0.0.1:7946 GOSSIP_SECRET_FILE=gossip-secret deno run -A examples/hono_app.ts
 * ```
 *
 * On a network trusted as it is, `GOSSIP_AUTH=off` instead; with neither,
 * `spawn()` refuses to gossip.
 *
 * It imports rateguard by its published name (in this checkout, deno.json's
 * and package.json's `name` and `exports` resolve it to the source), so it
 * runs as written in an app that has `@rateguard/guard`, `hono` and
 * `@hono/node-server`.
 *
 * @module
 */

import process from "node:process";
import { Buffer } from "node:buffer";
import { readFileSync } from "node:fs";
import { Hono } from "hono";
import { serve } from "@hono/node-server";
import { GossipAuth, Guard, Limit, Secret } from "@rateguard/guard";
import { rateLimit } from "@rateguard/guard/hono";

// Per tenant, across every instance: the default class and the pro plan.
const limits: Record<string, Limit> = {
  "": Limit.perMinute(60).burst(5),
  pro: Limit.perSecond(100),
};
let builder = Guard.builder().defaultLimit(limits[""]).class("pro", limits.pro);
if (process.env.BIND) {
  builder = builder.bind(process.env.BIND).seeds(process.env.SEEDS?.split(",") ?? []);
  if (process.env.GOSSIP_SECRET_FILE) {
    // One base64 secret per line; two while a rotation runs.
    const lines = readFileSync(process.env.GOSSIP_SECRET_FILE, "utf8").split("\n");
    const secrets = lines.map((line) => line.trim()).filter((line) => line !== "")
      .map((line) => new Secret(new Uint8Array(Buffer.from(line, "base64"))));
    builder = builder.gossipAuth(GossipAuth.Required, secrets);
  } else if (process.env.GOSSIP_AUTH === "off") {
    builder = builder.gossipAuth(GossipAuth.Off);
  }
}
const guard = await builder.spawn();

const app = new Hono();
app.use(
  "/*",
  rateLimit({
    guard,
    // A tenant on the pro plan is checked in its class; a request with no
    // tenant is limited as one "anonymous" tenant.
    key: (c) => {
      const tenant = c.req.header("x-tenant") ?? "anonymous";
      return c.req.header("x-plan") === "pro" ? { key: tenant, class: "pro" } : tenant;
    },
    // The limit each class's RateLimit-Policy field tells.
    limit: (_key, { class: cls }) => limits[cls],
    headers: "both",
  }),
);
app.get("/", (c) => c.json({ served: true }));

// @hono/node-server serves through node:http, which Deno and Bun provide
// too; on one runtime only, its own server does as well (Deno.serve(app.fetch),
// Bun.serve({ fetch: app.fetch }), or `export default app`).
const server = serve(
  { fetch: app.fetch, hostname: "127.0.0.1", port: Number(process.env.PORT ?? 8000) },
  (info) => console.log(`listening on http://${info.address}:${info.port}`),
);

const stop = async () => {
  await new Promise((resolve) => server.close(resolve));
  await guard.leave();
  process.exit(0);
};
process.on("SIGTERM", () => void stop());
process.on("SIGINT", () => void stop());
