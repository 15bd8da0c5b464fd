// Test support: run a script of the project under the same runtime as the
// test itself, with a bounded time, and always kill what was started.
import { type ChildProcess, spawn } from "node:child_process";
import process from "node:process";

const runtime = globalThis as unknown as { Deno?: { execPath(): string }; Bun?: unknown };

/** The command that runs a TypeScript file under the current runtime. */
export function scriptCommand(file: string, args: readonly string[]): [string, string[]] {
  if (runtime.Deno) return [runtime.Deno.execPath(), ["run", "-A", file, ...args]];
  if (runtime.Bun) return [process.execPath, [file, ...args]];
  return ["node_modules/.bin/tsx", [file, ...args]];
}

/** A started script: its output so far, and a way to wait for a line. */
export interface Started {
  readonly child: ChildProcess;
  stdout(): string;
  stderr(): string;
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  exited(timeoutMs?: number): Promise<number | null>;
  kill(): void;
}

/** Starts `file` with `args`; the caller must `kill()` it (in a finally). */
export function start(
  file: string,
  args: readonly string[],
  env: Record<string, string> = {},
): Started {
  const [cmd, argv] = scriptCommand(file, args);
  const child = spawn(cmd, argv, {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
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
