// A check's body however it arrives, on real sockets (127.0.0.1, a free
// port), on every server the sidecar has here: sent with its headers (on
// node:http taken as the server holds it, see serve_node.ts's
// receivedBody), after them in a later write, in chunks, larger than the
// bound, or not UTF-8. Each is read as it was sent, and answered as the
// same bytes in one write are.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { connect } from "node:net";
import { Guard, Limit } from "../../mod.ts";
import { MAX_BODY_BYTES, sidecarApp } from "../../src/http/sidecar.ts";
import { type HttpServerKind, serveHttp } from "../../src/http/serve.ts";
import { HTTP_SERVERS } from "./support.ts";

/**
 * The body of an answer, once whole: by its length, or its chunks (Bun's
 * node:http answers chunked); undefined while more is to come.
 */
function bodyOf(answer: string): string | undefined {
  const at = answer.indexOf("\r\n\r\n");
  if (at < 0) return undefined;
  const head = answer.slice(0, at);
  let rest = answer.slice(at + 4);
  const length = /content-length: (\d+)/i.exec(head);
  if (length) {
    return rest.length >= Number(length[1]) ? rest.slice(0, Number(length[1])) : undefined;
  }
  if (!rest.endsWith("0\r\n\r\n")) return undefined;
  let body = "";
  for (;;) {
    const size = parseInt(rest, 16);
    if (size === 0) return body;
    const from = rest.indexOf("\r\n") + 2;
    body += rest.slice(from, from + size);
    rest = rest.slice(from + size + 2);
  }
}

/** Sends `parts` in turn, `gapMs` apart, on one connection; the server's whole answer. */
function exchange(
  port: number,
  parts: readonly (string | Uint8Array)[],
  gapMs = 0,
): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    let received = "";
    socket.on("data", (d) => {
      received += d;
      if (bodyOf(received) !== undefined) {
        socket.destroy();
        resolve(received);
      }
    });
    socket.on("error", reject);
    socket.on("close", () => resolve(received));
    const send = (i: number) => {
      if (i === parts.length || socket.destroyed) return;
      socket.write(parts[i]);
      setTimeout(() => send(i + 1), gapMs);
    };
    socket.once("connect", () => send(0));
  });
}

const head = (length: number | "chunked") =>
  `POST /v1/check HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n` +
  (length === "chunked"
    ? "Transfer-Encoding: chunked\r\n\r\n"
    : `Content-Length: ${length}\r\n\r\n`);

const status = (answer: string) => Number(answer.slice(9, 12));
const json = (answer: string) => JSON.parse(bodyOf(answer) ?? "");

/** Runs `body` against a sidecar on `kind` at 100 an hour, burst 100, on a free port. */
async function withSidecar(
  kind: HttpServerKind,
  body: (port: number, guard: Guard) => Promise<void>,
): Promise<void> {
  const guard = await Guard.builder().defaultLimit(Limit.perHour(100).burst(100)).spawn();
  const server = await serveHttp(sidecarApp(guard).fetch, {
    hostname: "127.0.0.1",
    port: 0,
    server: kind,
  });
  try {
    await body(Number(server.address.split(":").pop()), guard);
  } finally {
    await server.close();
    await guard.leave();
  }
}

for (const kind of HTTP_SERVERS) {
  describe(`a check's body as it arrives, ${kind}`, () => {
    it("is read whole whether it comes with its headers, after them or in chunks", async () => {
      await withSidecar(kind, async (port) => {
        const body = '{"key": "k", "cost": 3}';
        const withHeaders = await exchange(port, [head(body.length) + body]);
        assert.equal(status(withHeaders), 200, withHeaders);
        // No refill within the test: each answer shows the cost it read.
        assert.equal(json(withHeaders).remaining, 97);
        const after = await exchange(
          port,
          [head(body.length), body.slice(0, 5), body.slice(5)],
          30,
        );
        assert.equal(status(after), 200, after);
        assert.equal(json(after).remaining, 94, "the body's cost, read whole");
        const chunk = (s: string) => `${s.length.toString(16)}\r\n${s}\r\n`;
        const chunked = await exchange(port, [
          head("chunked") + chunk(body.slice(0, 7)),
          chunk(body.slice(7)) + "0\r\n\r\n",
        ], 30);
        assert.equal(status(chunked), 200, chunked);
        assert.equal(json(chunked).remaining, 91);
      });
    });

    it("refuses a body over the bound, one not UTF-8 and an empty one, as it would from the Request", async () => {
      await withSidecar(kind, async (port, guard) => {
        const big = `{"key": "${"k".repeat(MAX_BODY_BYTES)}"}`;
        assert.equal(status(await exchange(port, [head(big.length) + big])), 413);
        const bad = new Uint8Array([...new TextEncoder().encode('{"key": "'), 0xff, 0x22, 0x7d]);
        const badAnswer = await exchange(port, [
          new Uint8Array([...new TextEncoder().encode(head(bad.length)), ...bad]),
        ]);
        assert.equal(status(badAnswer), 400);
        assert.match(json(badAnswer).detail, /not valid UTF-8/);
        const empty = await exchange(port, [head(0)]);
        assert.equal(status(empty), 400);
        assert.match(json(empty).detail, /empty/);
        assert.equal(
          guard.peek("k").remaining,
          99,
          "nothing was checked (peek counts the next check)",
        );
      });
    });
  });
}
