/**
 * Reading the sidecar's request bodies and queries. Every reader validates
 * the whole request before anything acts on it, and names the field at
 * fault as a JSON pointer, so nothing malformed can change state.
 *
 * The shape is checked here; the length of a key or class name, and a
 * batch's pair given twice, by the guard, once: it validates before it
 * changes anything, and its refusal says which was too long
 * (`KeyBytesError`) or which item came again (`DuplicateItemError`),
 * which {@link keyFault} turns into the pointer a reader here would have
 * named.
 *
 * @module
 */

import type { BatchItem } from "../core/enforcer.ts";
import { KeyLimit } from "../core/key_limit.ts";
import { isCost, Limit, MAX_BURST, MAX_COST } from "../core/limit.ts";
import { KeyBytesError } from "../core/key_bytes.ts";
import { DuplicateItemError } from "../core/batch.ts";
import { BadRequest, BodyCut, ContentTooLarge } from "./problem.ts";
import { messageOf } from "../core/errors.ts";
import { receivedBody } from "./serve_node.ts";

/** The largest request body the sidecar reads. */
export const MAX_BODY_BYTES = 64 * 1024;

/** A check request, as validated. */
export interface CheckRequest {
  /** The key. */
  readonly key: string;
  /** The class, `""` for the default. */
  readonly className: string;
  /** What the request costs. */
  readonly cost: number;
}

type Json = Record<string, unknown>;

/**
 * Reads the body as JSON, at most {@link MAX_BODY_BYTES}: an empty or
 * malformed body is a {@link BadRequest}, a larger one {@link ContentTooLarge}.
 * A declared length is checked before reading; a chunked body is read up
 * to the bound and no further. A body cut off (the client hung up, or the
 * server's request timeout closed it) is a {@link BodyCut}.
 *
 * @param bindings What the server handed the handler beside `req` (a Hono
 *   app's `c.env`): on `node:http`, a body already received whole is taken
 *   as the server holds it, with no copy (see `serve_node.ts`).
 */
export async function readJson(req: Request, bindings?: unknown): Promise<unknown> {
  const received = receivedBody(bindings, MAX_BODY_BYTES);
  const bytes = (received && await received) ?? await readBody(req);
  // Decoded leniently, distinct invalid bytes would all become U+FFFD, and
  // different keys one key: a text with one is decoded again, strictly.
  // (The lenient decoder is the runtimes' fast path; the strict one is not.)
  const text = LENIENT.decode(bytes);
  if (text.includes("\uFFFD") && !isUtf8Bytes(bytes)) {
    throw new BadRequest("the body is not valid UTF-8");
  }
  try {
    return JSON.parse(text);
  } catch {
    if (text.trim() === "") throw new BadRequest("the body is empty: expected a JSON object");
    throw new BadRequest("the body is not valid JSON");
  }
}

/** The body from the Request, at most {@link MAX_BODY_BYTES}, as it arrives. */
async function readBody(req: Request): Promise<Uint8Array> {
  const declared = req.headers.get("content-length");
  if (declared !== null && Number(declared) > MAX_BODY_BYTES) throw tooLarge();
  try {
    return declared !== null ? await wholeBody(req) : await readBounded(req);
  } catch (e) {
    if (e instanceof ContentTooLarge) throw e;
    throw new BodyCut(`the request body was cut off: ${messageOf(e)}`);
  }
}

/** Refuses what is not UTF-8 rather than replacing it; keeps a leading BOM as text. */
const UTF8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
/** Replaces what is not UTF-8 with U+FFFD; keeps a leading BOM as text. */
const LENIENT = new TextDecoder("utf-8", { ignoreBOM: true });

function isUtf8Bytes(bytes: Uint8Array): boolean {
  try {
    UTF8.decode(bytes);
    return true;
  } catch {
    return false;
  }
}

/** A body of declared length, whole: as bytes where the runtime has it, with no copy. */
function wholeBody(req: Request): Promise<Uint8Array> {
  const bytes = (req as { bytes?: () => Promise<Uint8Array> }).bytes;
  return bytes ? bytes.call(req) : req.arrayBuffer().then((b) => new Uint8Array(b));
}

async function readBounded(req: Request): Promise<Uint8Array> {
  if (req.body === null) return new Uint8Array(0);
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = req.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_BODY_BYTES) {
      await reader.cancel();
      throw tooLarge();
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) bytes.set(c, (at += c.byteLength) - c.byteLength);
  return bytes;
}

function tooLarge(): ContentTooLarge {
  return new ContentTooLarge(`the body is larger than ${MAX_BODY_BYTES} bytes`);
}

/** The body as an object, or a {@link BadRequest} showing the expected shape. */
export function object(body: unknown, shape: string, field = ""): Json {
  if (body === null || typeof body !== "object" || Array.isArray(body)) {
    throw new BadRequest(
      `${field === "" ? "the body" : field} must be a JSON object like ${shape}`,
      field === "" ? undefined : field,
    );
  }
  return body as Json;
}

/** Checks a key's shape, naming the field: a non-empty string (its length is the guard's to check). */
export function checkKeyField(key: unknown, field: string): string {
  if (typeof key !== "string" || key === "") {
    throw new BadRequest("key must be a non-empty string", field);
  }
  return key;
}

/**
 * The guard's refusal of a key or class name for its length, or of a
 * batch's pair given twice, as the 400 that names its field: `at` is where
 * the request holds the pair (`""` for a body's `/key` and `/class`,
 * `/query` for the query's, `/items` for a batch's, whose item the refusal
 * tells). Any other error is itself.
 *
 * @param e What the guard threw.
 * @param at The JSON pointer the key and class are under.
 * @returns The error to throw.
 */
export function keyFault(e: unknown, at: string): unknown {
  if (e instanceof DuplicateItemError) {
    return new BadRequest("the same class and key appear twice in one batch", `${at}/${e.item}`);
  }
  if (!(e instanceof KeyBytesError)) return e;
  const item = e.item === undefined ? "" : `/${e.item}`;
  return new BadRequest(e.detail, `${at}${item}/${e.part}`);
}

/** Reads `{"key", "class"?, "cost"?}` at `at` (a JSON pointer prefix). */
export function parseCheck(body: unknown, at = ""): CheckRequest {
  const o = object(body, '{"key": "tenant:42"}', at);
  const { key: rawKey, class: className = "", cost = 1 } = o;
  const key = checkKeyField(rawKey, `${at}/key`);
  if (typeof className !== "string") throw new BadRequest("class must be a string", `${at}/class`);
  if (!isCost(cost)) {
    throw new BadRequest(`cost must be a whole number from 1 to ${MAX_COST}`, `${at}/cost`);
  }
  return { key, className, cost };
}

/**
 * Reads `{"items": [{"key", "class"?, "cost"?}, ...]}`. A pair given twice
 * is the guard's to refuse, once ({@link keyFault} names the item).
 */
export function parseBatch(body: unknown): BatchItem[] {
  const { items } = object(body, '{"items": [{"key": "ip:1"}, {"key": "user:7"}]}');
  if (!Array.isArray(items) || items.length === 0) {
    throw new BadRequest("items must be a non-empty array of checks", "/items");
  }
  return items.map((item, i) => {
    const c = parseCheck(item, `/items/${i}`);
    return { key: c.key, class: c.className, cost: c.cost };
  });
}

/** Reads `{"limit": "10/s", "burst"?: 5}` at `at`. */
export function parseLimit(body: unknown, at = ""): Limit {
  const o = object(body, '{"limit": "10/s", "burst": 5}', at);
  if (typeof o.limit !== "string") {
    throw new BadRequest('limit must be a string like "1000/min"', `${at}/limit`);
  }
  let limit: Limit;
  try {
    limit = Limit.parse(o.limit);
  } catch (e) {
    throw new BadRequest(messageOf(e), `${at}/limit`);
  }
  if (o.burst === undefined) return limit;
  if (
    typeof o.burst !== "number" || !Number.isInteger(o.burst) || o.burst < 0 ||
    o.burst > MAX_BURST
  ) {
    throw new BadRequest(`burst must be a whole number from 0 to ${MAX_BURST}`, `${at}/burst`);
  }
  try {
    return limit.burst(o.burst);
  } catch (e) {
    // A burst the limit spends in under a microsecond: the Limit names the bound.
    throw new BadRequest((e as Error).message, `${at}/burst`);
  }
}

/** Reads a key's limit: `{"limit": "2000/s", "burst"?}` or `{"follows": "pro"}`. */
export function parseKeyLimit(body: unknown, at = ""): Limit | KeyLimit {
  const o = object(body, '{"limit": "2000/s"} or {"follows": "pro"}', at);
  if (o.follows === undefined) return parseLimit(o, at);
  if (o.limit !== undefined) {
    throw new BadRequest("give limit or follows, not both", `${at}/follows`);
  }
  if (typeof o.follows !== "string") {
    throw new BadRequest("follows must be the name of a class", `${at}/follows`);
  }
  return KeyLimit.class(o.follows);
}

/** Reads a required string member. */
export function stringField(o: Json, name: string, at: string): string {
  const v = o[name];
  if (typeof v !== "string") throw new BadRequest(`${name} must be a string`, `${at}/${name}`);
  return v;
}

/** A run of percent-escapes: where a query's bytes, rather than its characters, are written. */
const ESCAPES = /(?:%[0-9A-Fa-f]{2})+/g;

/**
 * A request's URL, once its query is known to read as the client meant:
 * a query whose escapes are not UTF-8 is refused. Every route that reads
 * a query reads it through this. Refused because `URLSearchParams`
 * would read each bad byte as U+FFFD, so that different keys would become
 * one, where a body with the same bytes is a 400. Only escapes can carry
 * bad bytes; a `%` that starts no escape keeps its lenient meaning (itself).
 *
 * @param url The request's URL, its query as the client sent it.
 * @returns The URL, to read its `searchParams`.
 * @throws {BadRequest} naming the first parameter at fault.
 */
export function requestUrl(url: string): URL {
  checkQuery(url);
  return new URL(url);
}

function checkQuery(url: string): void {
  const start = url.indexOf("?");
  if (start < 0 || url.indexOf("%", start) < 0) return;
  const end = url.indexOf("#", start);
  for (const pair of url.slice(start + 1, end < 0 ? undefined : end).split("&")) {
    const eq = pair.indexOf("=");
    const name = eq < 0 ? pair : pair.slice(0, eq);
    if (isUtf8(name) && isUtf8(pair.slice(name.length + 1))) continue;
    const shown = isUtf8(name) ? new URLSearchParams(`${name}=`).keys().next().value ?? "" : "";
    throw new BadRequest(
      `the query parameter ${
        shown || "(a name that is not UTF-8)"
      } is not UTF-8 once percent-decoded`,
      `/query/${shown}`,
    );
  }
}

function isUtf8(part: string): boolean {
  for (const [run] of part.matchAll(ESCAPES)) {
    const bytes = new Uint8Array(run.length / 3);
    for (let i = 0; i < bytes.length; i++) bytes[i] = parseInt(run.slice(3 * i + 1, 3 * i + 3), 16);
    if (!isUtf8Bytes(bytes)) return false;
  }
  return true;
}

/** A query parameter, required or with a fallback. */
export function queryParam(url: URL, name: string, fallback?: string): string {
  const v = url.searchParams.get(name) ?? fallback;
  if (v === undefined) {
    throw new BadRequest(`the query parameter ${name} is required`, `/query/${name}`);
  }
  return v;
}
