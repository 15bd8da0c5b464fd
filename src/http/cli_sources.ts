/**
 * Where the sidecar's flag values come from and how each is read, naming
 * its source in an error: the command line, the environment, and the
 * `--config` file.
 *
 * @module
 */

import { parseArgs } from "node:util";
import { Limit } from "../core/limit.ts";
import { messageOf } from "../core/errors.ts";
import type { OptionBounds } from "../core/options.ts";
import { parseDurationMs } from "../core/duration.ts";
import { splitHostPort } from "../proto/host_port.ts";
import {
  ARGV_OPTIONS,
  DEFAULT_HTTP,
  ENV_NAMES,
  type Flag,
  isAnswer,
  OPTIONS,
  RESERVED_ENV,
  type Switch,
  SWITCHES,
} from "./cli_flags.ts";

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

/** A flag's value from the first source that gives it, or undefined: what each flag's reader asks. */
export type Lookup = (flag: Flag) => Given | undefined;

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

/** What a class may say after its limit, and what each field does to the limit. */
const CLASS_FIELDS: Readonly<Record<string, (limit: Limit, text: string) => Limit>> = {
  burst: (limit, text) => limit.burst(wholeNumber(text)),
};

/**
 * Reads classes: `name=limit`, then its fields, each once (`,burst=n`).
 * One text may hold several classes separated by `;`
 * (`free=10/s,burst=20;pro=100/s`): a comma cannot part classes too, or a
 * misspelt field (`bust=20`) would read as a class of its own. A name
 * given twice is a mistake, not a change of mind.
 */
export function parseClasses({ texts, from }: GivenList): Array<readonly [string, Limit]> {
  const classes: Array<readonly [string, Limit]> = [];
  for (const spec of texts.flatMap((text) => text.split(";"))) {
    const items = spec.split(",").map((s) => s.trim()).filter((s) => s !== "");
    if (items.length === 0) continue;
    const [name, value] = pair(from, items[0], "name=limit, such as free=10/s");
    if (Object.hasOwn(CLASS_FIELDS, name)) {
      throw new UsageError(
        `${from}: ${name}=${value} needs a class before it, as free=10/s,${name}=20`,
      );
    }
    if (classes.some(([n]) => n === name)) {
      throw new UsageError(`${from}: the class ${JSON.stringify(name)} is given twice`);
    }
    classes.push([name, classLimit(`${from} ${name}`, value, items.slice(1))]);
  }
  return classes;
}

/** A class's limit with its fields applied; an unknown field or one given twice is refused. */
function classLimit(from: string, text: string, fields: readonly string[]): Limit {
  let limit = valueOf({ text, from }, (t) => Limit.parse(t));
  const seen = new Set<string>();
  for (const item of fields) {
    const [field, value] = pair(from, item, "field=value, such as burst=20");
    if (!Object.hasOwn(CLASS_FIELDS, field)) {
      const near = nearest(field, Object.keys(CLASS_FIELDS));
      const hint = near === undefined
        ? `the fields are ${Object.keys(CLASS_FIELDS).join(", ")}; classes are separated by ";"`
        : `did you mean ${near}?`;
      throw new UsageError(`${from}: unknown field ${JSON.stringify(field)} (${hint})`);
    }
    if (seen.has(field)) throw new UsageError(`${from}: ${field} is given twice`);
    seen.add(field);
    const of = limit;
    limit = valueOf({ text: value, from }, (t) => CLASS_FIELDS[field](of, t));
  }
  return limit;
}

/** `name=value` split at its first `=`, the name not empty. */
function pair(from: string, item: string, expected: string): [string, string] {
  const eq = item.indexOf("=");
  const name = item.slice(0, eq).trim();
  if (eq < 1 || name === "") {
    throw new UsageError(`${from}: expected ${expected}, got ${JSON.stringify(item)}`);
  }
  return [name, item.slice(eq + 1)];
}

/** The values `parseArgs` reads from the command line, by flag. */
export type ArgValues = {
  readonly [F in keyof typeof ARGV_OPTIONS]?: (typeof ARGV_OPTIONS)[F] extends { multiple: true }
    ? string[]
    : (typeof ARGV_OPTIONS)[F]["type"] extends "string" ? string
    : boolean;
};

/**
 * Reads the command line; every flag but `--class` at most once, and a
 * switch not both on and off: the last of two is not a safe guess.
 */
export function readArgv(argv: readonly string[]): ArgValues {
  let parsed;
  try {
    parsed = parseArgs({
      args: joinValues(argv),
      options: ARGV_OPTIONS,
      strict: true,
      allowPositionals: false,
      tokens: true,
    });
  } catch (e) {
    throw new UsageError(messageOf(e).split("\n")[0]);
  }
  const seen = new Map<string, { name: string; value: string | undefined }>();
  for (const token of parsed.tokens) {
    if (token.kind !== "option" || isAnswer(token.name)) continue;
    if ("multiple" in ARGV_OPTIONS[token.name as Flag]) continue;
    const negated = token.name.startsWith("no-") &&
      SWITCHES.includes(token.name.slice(3) as Switch);
    const flag = negated ? token.name.slice(3) : token.name;
    const before = seen.get(flag);
    if (before === undefined) {
      seen.set(flag, { name: token.name, value: token.value });
    } else if (before.name !== token.name) {
      throw new UsageError(`--${flag} and --no-${flag} are both given: give one`);
    } else {
      const values = token.value === undefined
        ? ""
        : ` (${JSON.stringify(before.value)}, then ${JSON.stringify(token.value)})`;
      throw new UsageError(`--${token.name} is given twice${values}: give it once`);
    }
  }
  return parsed.values as ArgValues;
}

/**
 * `--burst -1` as `--burst=-1`: a flag that takes a value takes the next
 * argument whatever it looks like, so a negative number is refused as a
 * number rather than as an ambiguous argument.
 */
function joinValues(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const name = /^--([a-z-]+)$/.exec(argv[i])?.[1];
    const option = name !== undefined && Object.hasOwn(OPTIONS, name)
      ? OPTIONS[name as Flag]
      : undefined;
    if (option?.type === "string" && i + 1 < argv.length) out.push(`${argv[i]}=${argv[++i]}`);
    else out.push(argv[i]);
  }
  return out;
}

/**
 * Refuses a `RATEGUARD_` variable the sidecar does not read (the prefix in
 * any case), naming the nearest it does: a misspelt
 * `RATEGUARD_ADMIN_TOKEN_FILE` left unread would leave the admin routes
 * open. {@link RESERVED_ENV} is let through.
 */
export function checkEnv(env: Env): void {
  const known = new Set([...ENV_NAMES, ...RESERVED_ENV]);
  const unknown = Object.keys(env).filter((n) => /^rateguard_/i.test(n) && !known.has(n)).sort();
  if (unknown.length === 0) return;
  const prefix = "RATEGUARD_".length;
  const near = nearest(
    unknown[0].toUpperCase().slice(prefix),
    ENV_NAMES.map((n) => n.slice(prefix)),
  );
  const hint = near === undefined
    ? "--help lists the variables"
    : `did you mean RATEGUARD_${near}?`;
  throw new UsageError(`unknown environment variable ${unknown[0]} (${hint})`);
}

/**
 * The candidate fewest edits away from `word`, if it is near enough to be
 * what was meant: at most half the word's length in edits, and 2 at least.
 */
function nearest(word: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestEdits = Math.max(2, Math.floor(word.length / 2)) + 1;
  for (const candidate of candidates) {
    const edits = editDistance(word, candidate);
    if (edits < bestEdits) [best, bestEdits] = [candidate, edits];
  }
  return best;
}

/** Levenshtein's distance: insertions, deletions and substitutions, one row at a time. */
function editDistance(a: string, b: string): number {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = row[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1);
      next.push(Math.min(row[j] + 1, next[j - 1] + 1, substitution));
    }
    row = next;
  }
  return row[b.length];
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
    if (!Object.hasOwn(OPTIONS, key) || key === "config" || isAnswer(key)) {
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

/** Reads `host:port` or `[v6]:port`, with the one parser of `src/proto/host_port.ts`. */
export function parseHostPort(from: string, text: string): { hostname: string; port: number } {
  const split = splitHostPort(text.trim());
  if (split === undefined) {
    throw new UsageError(
      `${from}: expected host:port, such as ${DEFAULT_HTTP}, got ${JSON.stringify(text)}`,
    );
  }
  return { hostname: split.host, port: split.port };
}

/** Reads a duration, `200ms`, `1s` or a bare number of milliseconds, within `bounds`. */
export function durationMs(text: string, bounds: OptionBounds): number {
  const ms = parseDurationMs(text);
  const { min, max } = bounds;
  if (ms === undefined || ms < min || ms > max) {
    throw new RangeError(
      `expected a duration from ${min}ms to ${max}ms, such as 200ms or 1s, got ${
        JSON.stringify(text)
      }`,
    );
  }
  return Math.round(ms);
}
