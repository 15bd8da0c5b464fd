/**
 * The rateguard sidecar: a guard with an HTTP API on loopback, for services
 * in any language.
 *
 * ```sh
 * deno run -A cli.ts --limit 1000/min
 * bun cli.ts --limit 1000/min
 * npx tsx cli.ts --limit 1000/min
 * ```
 *
 * A bad flag prints one line naming it and exits with status 2. SIGTERM or
 * SIGINT stops accepting requests, lets those in flight finish, leaves, and
 * exits 0.
 *
 * @module
 */

import process from "node:process";
import { Guard } from "./src/runtime/guard.ts";
import { parseSidecarArgs, UsageError } from "./src/http/cli_args.ts";
import { sidecarApp } from "./src/http/sidecar.ts";
import { type HttpServer, serveHttp } from "./src/http/serve.ts";

async function main(): Promise<void> {
  const parsed = parseSidecarArgs(process.argv.slice(2), process.env);
  if (parsed.kind === "help") {
    process.stdout.write(parsed.text);
    return;
  }
  const { config } = parsed;
  let guard: Guard;
  try {
    let builder = Guard.builder().defaultLimit(config.limit).dryRun(config.dryRun).trackedKeys(
      config.trackedKeys,
    );
    for (const [name, limit] of config.classes) builder = builder.class(name, limit);
    guard = await builder.spawn();
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  // Listen for signals before the port opens, so that a supervisor's
  // SIGTERM right after start-up is never the default (fatal) action.
  const running: { server?: HttpServer; stopping?: boolean } = {};
  const stop = async (signal: string) => {
    if (running.stopping) return;
    running.stopping = true;
    console.log(`rateguard: ${signal}, stopping`);
    await running.server?.close();
    await guard.leave();
    process.exit(0);
  };
  process.on("SIGTERM", () => void stop("SIGTERM"));
  process.on("SIGINT", () => void stop("SIGINT"));

  const server = running.server = await serveHttp(sidecarApp(guard).fetch, config.http);
  const classes = config.classes.map(([n, l]) => ` ${n}=${l}`).join("");
  console.log(
    `rateguard: standalone, limit ${config.limit}${classes}; listening on http://${server.address}`,
  );
}

main().catch((e: unknown) => {
  const message = e instanceof Error ? e.message : String(e);
  console.error(`rateguard: ${message.split("\n")[0]}`);
  process.exit(e instanceof UsageError ? 2 : 1);
});
