// Test support: sidecar processes on 127.0.0.1 (free ports), waiting for
// their "listening" log line on stderr.
import { spawn } from "node:child_process";
import process from "node:process";
import { currentRuntime, type RuntimeName, start, type Started } from "../support/process.ts";
import type { HttpServerKind } from "../../src/http/serve.ts";

export interface Sidecar {
  readonly process: Started;
  /** `http://127.0.0.1:port`. */
  readonly url: string;
  /** The gossip address, or "standalone". */
  readonly gossip: string;
}

/**
 * Starts `cli.ts` with `args` plus free HTTP (and, with `fleet`, UDP) ports.
 * A fleet sidecar whose args say nothing of signing says `--gossip-auth off`:
 * loopback is a trusted network, and a bound sidecar must say so; the tests
 * of signing pass their own `--gossip-auth` or `--gossip-secret-file`.
 */
export async function startSidecar(
  args: readonly string[],
  options: { fleet?: boolean; runtime?: RuntimeName; env?: Record<string, string> } = {},
): Promise<Sidecar> {
  const all = ["--http", "127.0.0.1:0", "--log-format", "json", ...args];
  if (options.fleet) all.push("--bind", "127.0.0.1:0", "--protocol-period", "50ms");
  if (options.fleet && !args.some((a) => a.startsWith("--gossip-"))) {
    all.push("--gossip-auth", "off");
  }
  const p = start("cli.ts", all, { runtime: options.runtime, env: options.env });
  try {
    const line = await waitForStderr(p, /\{[^\n]*"msg":"listening"[^\n]*\}/);
    const { http, gossip } = JSON.parse(line[0]) as { http: string; gossip: string };
    return { process: p, url: http, gossip };
  } catch (e) {
    p.kill();
    throw e;
  }
}

/**
 * Three fleet sidecars with `flags`, on Deno, Bun and Node, the last two
 * joining through the first. Kill them when done.
 */
export async function startThreeRuntimes(flags: readonly string[]): Promise<Sidecar[]> {
  const fleet: Sidecar[] = [];
  try {
    fleet.push(await startSidecar(flags, { fleet: true, runtime: "deno" }));
    const seeds = ["--seeds", fleet[0].gossip];
    fleet.push(await startSidecar([...flags, ...seeds], { fleet: true, runtime: "bun" }));
    fleet.push(await startSidecar([...flags, ...seeds], { fleet: true, runtime: "node" }));
    return fleet;
  } catch (e) {
    for (const s of fleet) s.process.kill();
    throw e;
  }
}

/** Waits for `pattern` in the process's stderr. */
export async function waitForStderr(
  p: Started,
  pattern: RegExp,
  timeoutMs = 30_000,
): Promise<RegExpMatchArray> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const m = pattern.exec(p.stderr());
    if (m) return m;
    if (Date.now() > deadline || p.child.exitCode !== null) {
      throw new Error(`no ${pattern} in stderr: ${p.stderr()} / stdout: ${p.stdout()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Polls `probe` until it is true, at most `timeoutMs`. */
export async function eventually(
  probe: () => Promise<boolean>,
  what: string,
  timeoutMs = 20_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** POSTs JSON and reads JSON back. */
export async function postJson(url: string, body: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(url, { method: "POST", body: JSON.stringify(body) });
  return await res.json() as Record<string, unknown>;
}

/** Runs a command to its end, at most 60 s, with its output. */
export function run(
  cmd: string,
  args: readonly string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { env: { ...process.env, ...env } });
    let output = "";
    child.stdout.on("data", (d) => (output += d));
    child.stderr.on("data", (d) => (output += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
    child.on("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

/** The servers `serveHttp` has on this runtime: `node:http` everywhere, the runtime's own on Deno and Bun. */
export const HTTP_SERVERS: readonly HttpServerKind[] = currentRuntime === "node"
  ? ["node"]
  : ["node", "native"];

/** A bound on slow clients that a test needs of the server. */
export type SlowBound = "headers" | "idle" | "idle-exact" | "connections" | "body-close";

/**
 * Why `server` on this runtime does not hold `bound`, as the reason the
 * test that needs it is skipped there (printed with the test); false when
 * it holds it. Measured on Deno 2.9 and Bun 1.4: neither native server
 * shows a connection before its request's headers are in, nor lets a
 * handler close one (see src/http/serve.ts).
 */
export function lacking(server: HttpServerKind, bound: SlowBound): string | false {
  if (server === "node") return false;
  if (currentRuntime === "deno" || currentRuntime === "deno-net") {
    return {
      headers: "Deno.serve has no header timeout: a connection that never ends its headers stays",
      idle: "Deno.serve has no idle timeout: a kept-alive connection stays until the client leaves",
      "idle-exact":
        "Deno.serve has no idle timeout: a kept-alive connection stays until the client leaves",
      connections: "Deno.serve has no bound on connections, and shows none before its headers",
      "body-close":
        "Deno.serve sends the 408 but keeps the connection until the body ends or the client leaves",
    }[bound];
  }
  if (currentRuntime === "bun") {
    if (bound === "idle-exact") {
      return "Bun.serve's idleTimeout is in whole seconds, checked every 4 s (closed at 4 s for 1 s and 2 s)";
    }
    if (bound === "connections") {
      return "Bun.serve has no bound on connections, and shows none before its headers (those it closes after about 10 s)";
    }
  }
  return false;
}
