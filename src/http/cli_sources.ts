/**
 * Where the sidecar's flag values come from and how each is read, naming
 * its source in an error: the command line, the environment, and the
 * `--config` file.
 *
 * @module
 */

import { Limit } from "../core/limit.ts";
import { messageOf } from "../core/errors.ts";
import { type Flag, OPTIONS } from "./cli_flags.ts";

/** The environment the flags are also read from. */
export type Env = Readonly<Record<string, string | undefined>>;

/** A bad flag or value; the CLI prints the message on one line and exits 2. */
export class UsageError extends Error {
  /** A usage error with a one-line message. */
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

/** Where a value came from, as its error names it: `--hot-keys`, `RATEGUARD_HOT_KEYS`, `FILE: hot-keys`. */
export interface Given {
  readonly text: string;
  readonly from: string;
}

/** The values of one flag that takes several (`--class`), with where they came from. */
export interface GivenList {
  readonly texts: readonly string[];
  readonly from: string;
}

/** The classes from the first source that has any: the flags, the environment, the file. */
export function classTexts(
  flags: readonly string[] | undefined,
  env: Env,
  file: unknown,
  configPath: string | undefined,
): GivenList {
  if (flags !== undefined) return { texts: flags, from: "--class" };
  const e = set(env.RATEGUARD_CLASS);
  if (e !== undefined) return { texts: [e], from: "RATEGUARD_CLASS" };
  if (file === undefined) return { texts: [], from: "--class" };
  return { texts: Array.isArray(file) ? file : [String(file)], from: `${configPath}: class` };
}

/**
 * Reads classes, `name=limit` with an optional `,burst=n` after it; one
 * text may hold several, comma-separated (`free=10/s,burst=20,pro=100/s`).
 * A name given twice is a mistake, not a change of mind.
 */
export function parseClasses({ texts, from }: GivenList): Array<readonly [string, Limit]> {
  const classes: Array<[string, Limit]> = [];
  for (const text of texts) {
    let last: [string, Limit] | undefined;
    for (const item of text.split(",").map((s) => s.trim()).filter((s) => s !== "")) {
      const eq = item.indexOf("=");
      const name = item.slice(0, eq).trim();
      const value = item.slice(eq + 1);
      if (eq < 1 || name === "") {
        throw new UsageError(
          `${from}: expected name=limit, such as free=10/s, got ${JSON.stringify(item)}`,
        );
      }
      if (name === "burst") {
        if (last === undefined) {
          throw new UsageError(
            `${from}: burst=${value} needs a class before it, as free=10/s,burst=20`,
          );
        }
        const of = last;
        of[1] = valueOf(
          { text: value, from: `${from} ${of[0]}` },
          (t) => of[1].burst(wholeNumber(t)),
        );
        continue;
      }
      if (classes.some(([n]) => n === name)) {
        throw new UsageError(`${from}: the class ${JSON.stringify(name)} is given twice`);
      }
      last = [name, valueOf({ text: value, from: `${from} ${name}` }, (t) => Limit.parse(t))];
      classes.push(last);
    }
  }
  return classes;
}

/**
 * Reads the `--config` file: a JSON object whose keys are the flags' names
 * and whose values are strings, numbers or booleans (`class` and `seeds`
 * may be arrays of strings). JSON because every runtime parses it without
 * a dependency, and Kubernetes and every tool can write it.
 */
export function readConfig(path: string, text: string): Map<Flag, unknown> {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (e) {
    throw new UsageError(`--config ${path}: not valid JSON: ${messageOf(e).split("\n")[0]}`);
  }
  if (body === null || typeof body !== "object" || Array.isArray(body)) {
    throw new UsageError(
      `--config ${path}: expected a JSON object of flags, as {"limit": "1000/min"}`,
    );
  }
  const out = new Map<Flag, unknown>();
  for (const [key, value] of Object.entries(body)) {
    if (!Object.hasOwn(OPTIONS, key) || key === "config" || key === "help") {
      throw new UsageError(
        `${path}: unknown key ${
          JSON.stringify(key)
        }: the keys are the flags' names, as "limit" or "hot-keys"`,
      );
    }
    const many = (key === "class" || key === "seeds") && Array.isArray(value) &&
      value.every((v) => typeof v === "string");
    if (!many && !["string", "number", "boolean"].includes(typeof value)) {
      throw new UsageError(`${path}: ${key}: expected a string, a number or a boolean`);
    }
    out.set(key as Flag, key === "seeds" && many ? (value as string[]).join(",") : value);
  }
  return out;
}

/** The config file's text, or a usage error naming it. */
export function fromConfig(path: string, readFile: (path: string) => string): string {
  try {
    return readFile(path);
  } catch (e) {
    throw new UsageError(`--config: cannot read ${path}: ${messageOf(e).split("\n")[0]}`);
  }
}

/** A variable that is set and not empty: `RATEGUARD_BURST=` is no burst. */
export function set(text: string | undefined): string | undefined {
  return text === undefined || text.trim() === "" ? undefined : text;
}

/**
 * Reads a value, naming where it came from in the error instead of the
 * option the validator names (`hotKeys: ...` is told as `--hot-keys: ...`).
 */
export function valueOf<T>(given: Given, read: (text: string) => T): T {
  try {
    return read(given.text);
  } catch (e) {
    if (e instanceof UsageError) throw e;
    throw new UsageError(`${given.from}: ${messageOf(e).replace(/^[A-Za-z]+: /, "")}`);
  }
}

export function wholeNumber(text: string, bounds?: { min: number; max: number }): number {
  if (!/^\s*\d+\s*$/.test(text)) {
    const range = bounds === undefined ? "" : ` from ${bounds.min} to ${bounds.max}`;
    throw new RangeError(`expected a whole number${range}, got ${JSON.stringify(text)}`);
  }
  return Number(text);
}

export function bool(text: string): boolean {
  if (/^(1|true|yes|on)$/i.test(text)) return true;
  if (/^(0|false|no|off)$/i.test(text)) return false;
  throw new RangeError(`expected true or false, got ${JSON.stringify(text)}`);
}
