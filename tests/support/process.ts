// Test support: run a script of the project under the same runtime as the
// test itself, with a bounded time, and always kill what was started.
import { type ChildProcess, spawn } from "node:child_process";
import process from "node:process";

const runtime = globalThis as unknown as { Deno?: { execPath(): string }; Bun?: unknown };

/** A runtime that can run the project's TypeScript. */
export type RuntimeName = "deno" | "deno-net" | "bun" | "node";

/** The runtime running this test. */
export const currentRuntime: RuntimeName = runtime.Deno ? "deno" : runtime.Bun ? "bun" : "node";

/**
 * The command that runs a TypeScript file under a runtime (the current one
 * by default). Node runs it in one process with tsx as a loader, so that a
 * signal reaches the script itself, not a wrapper.
 */
export function scriptCommand(
  file: string,
  args: readonly string[],
  on: RuntimeName = currentRuntime,
): [string, string[]] {
  if (on === "deno") return ["node_modules/.bin/deno", ["run", "-A", file, ...args]];
  // Deno with its own UDP API (Deno.listenDatagram) rather than node:dgram.
  if (on === "deno-net") {
    return ["node_modules/.bin/deno", ["run", "-A", "--unstable-net", file, ...args]];
  }
  if (on === "bun") return ["node_modules/.bin/bun", [file, ...args]];
  return ["node", ["--import", "tsx", file, ...args]];
}

/** A started script: its output so far, and a way to wait for a line. */
export interface Started {
  readonly child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Writes a line to its stdin. */
  send(line: string): void;
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  exited(timeoutMs?: number): Promise<number | null>;
  kill(): void;
}

/** Starts `file` with `args`; the caller must `kill()` it (in a finally). */
export function start(
  file: string,
  args: readonly string[],
  options: { env?: Record<string, string>; runtime?: RuntimeName } = {},
): Started {
  const [cmd, argv] = scriptCommand(file, args, options.runtime);
  const child = spawn(cmd, argv, {
    env: { ...process.env, ...options.env },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout!.on("data", (d) => (out += d));
  child.stderr!.on("data", (d) => (err += d));
  const exit = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    send: (line) => {
      child.stdin!.write(`${line}\n`);
    },
    waitFor: (pattern, timeoutMs = 20_000) =>
      poll(
        () => pattern.exec(out),
        timeoutMs,
        () => `no ${pattern} in stdout: ${out} / stderr: ${err}`,
      ),
    exited: (timeoutMs = 20_000) =>
      Promise.race([
        exit,
        delay(timeoutMs).then(() =>
          Promise.reject(new Error(`still running after ${timeoutMs} ms`))
        ),
      ]),
    kill: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    },
  };
}

async function poll<T>(probe: () => T | null, timeoutMs: number, why: () => string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = probe();
    if (v !== null) return v;
    if (Date.now() > deadline) throw new Error(why());
    await delay(20);
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    (t as { unref?: () => void }).unref?.();
  });
}
