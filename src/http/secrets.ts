/**
 * The sidecar's secrets from files: the gossip secrets (one base64 secret per
 * line, at most two: the first signs, either verifies) and the admin token,
 * both watched so that a rotation is an update of the file with no restart;
 * and the key salt (raw bytes, read once: a salt changes only with the whole
 * fleet).
 *
 * @module
 */

import { Buffer } from "node:buffer";
import { readFileSync, statSync } from "node:fs";
import { MIN_SALT_BYTES, Secret } from "../core/auth.ts";
import { messageOf } from "../core/errors.ts";

/** How often a watched file is looked at for a change. */
const WATCH_EVERY_MS = 2_000;

/** Reads the gossip secrets: one base64 line each, at most two. Names the file and line at fault. */
export function readSecretFile(path: string): Secret[] {
  const text = readFileSync(path, "utf8");
  const lines = text.split("\n").map((l) => l.trim()).filter((l) => l !== "");
  if (lines.length === 0) throw new RangeError(`${path} holds no secret`);
  if (lines.length > 2) {
    throw new RangeError(`${path} holds ${lines.length} secrets, at most two (during a rotation)`);
  }
  return lines.map((line, i) => {
    if (!/^[A-Za-z0-9+/]+={0,2}$/.test(line) || line.length % 4 !== 0) {
      throw new TypeError(`${path}, line ${i + 1}: not base64`);
    }
    try {
      return new Secret(new Uint8Array(Buffer.from(line, "base64")));
    } catch (e) {
      throw new RangeError(`${path}, line ${i + 1}: ${messageOf(e)}`);
    }
  });
}

/** Reads the admin token: one line, no spaces in it. Names the file at fault. */
export function readTokenFile(path: string): string {
  let token: string;
  try {
    token = readFileSync(path, "utf8").trim();
  } catch (e) {
    throw new Error(`cannot read ${path}: ${messageOf(e)}`);
  }
  if (token === "" || /\s/.test(token)) {
    throw new RangeError(`${path} must hold one token on one line`);
  }
  return token;
}

/** Reads the key salt: the file's raw bytes, at least 16. */
export function readSaltFile(path: string): Uint8Array {
  const bytes = new Uint8Array(readFileSync(path));
  if (bytes.length < MIN_SALT_BYTES) {
    throw new RangeError(
      `${path} holds ${bytes.length} bytes, a salt needs at least ${MIN_SALT_BYTES}`,
    );
  }
  return bytes;
}

/**
 * Calls `changed` with what `read` makes of the file whenever its contents
 * change, and `failed` when a new version cannot be read (the caller then
 * keeps what it has). Returns a function that stops watching.
 */
export function watchFile<T>(
  path: string,
  read: (path: string) => T,
  handlers: { changed(value: T): void; failed(error: Error): void },
): () => void {
  let last = fingerprint(path);
  const timer = setInterval(() => {
    const now = fingerprint(path);
    if (now === last) return;
    last = now;
    let value: T;
    try {
      value = read(path);
    } catch (e) {
      handlers.failed(e instanceof Error ? e : new Error(messageOf(e), { cause: e }));
      return;
    }
    handlers.changed(value);
  }, WATCH_EVERY_MS);
  (timer as { unref?: () => void }).unref?.();
  return () => clearInterval(timer);
}

function fingerprint(path: string): string {
  try {
    const s = statSync(path);
    // A Kubernetes Secret is swapped by a symlink: size and time both move.
    return `${s.mtimeMs}:${s.size}:${readFileSync(path, "utf8")}`;
  } catch {
    return "missing";
  }
}
