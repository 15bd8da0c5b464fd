// A kept-alive connection can be closed by the sidecar (its idle timeout)
// just as the client sends a check on it. The client sends such a check
// again, once, on a new connection: the caller never sees that race. A
// server that does it to every reused connection makes the race certain.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { createServer, type Socket } from "node:net";
import { Client, ClientUnavailableError } from "../../src/client/mod.ts";
import { type Sidecar, startSidecar } from "../http/support.ts";
import { currentRuntime } from "../support/process.ts";

const ANSWER = '{"allowed":true,"remaining":1,"retryAfterMs":0,"resetMs":1}';

/** Answers the first request of each connection, and drops the connection at the second. */
async function closingOnReuse(): Promise<
  { url: string; requests: () => number; refunds: () => number; stop(): Promise<void> }
> {
  const sockets = new Set<Socket>();
  let requests = 0;
  let refunds = 0;
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    let served = 0;
    let buffered = "";
    socket.on("data", (chunk) => {
      buffered += chunk.toString("latin1");
      // One whole request: its head and its Content-Length's worth of body.
      for (;;) {
        const end = buffered.indexOf("\r\n\r\n");
        if (end < 0) return;
        const length = Number(/content-length:\s*(\d+)/i.exec(buffered.slice(0, end))?.[1] ?? 0);
        if (buffered.length < end + 4 + length) return;
        if (buffered.startsWith("POST /v1/refund ")) refunds++;
        buffered = buffered.slice(end + 4 + length);
        requests++;
        if (served++ > 0) {
          socket.destroy(); // the idle timeout firing as the request arrived
          return;
        }
        socket.write(
          "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nconnection: keep-alive\r\n" +
            `content-length: ${ANSWER.length}\r\n\r\n${ANSWER}`,
        );
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    requests: () => requests,
    refunds: () => refunds,
    stop: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe("a connection the sidecar closes as a check goes out on it", () => {
  it("is met by sending the check again on a new connection, once", async () => {
    const server = await closingOnReuse();
    try {
      const client = new Client({ url: server.url, timeoutMs: 2_000, onFailure: "throw" });
      for (let i = 0; i < 10; i++) {
        const d = await client.check(`k${i}`);
        assert.equal(d.allowed, true, `check ${i}`);
        assert.equal(d.failure, undefined);
      }
      // A check is sent at most three times (a pool may hold two stale connections).
      assert.ok(server.requests() <= 1 + 3 * 10, String(server.requests()));
      // A refund sent twice would admit more: it goes out once, whatever comes of it.
      for (let i = 0; i < 5; i++) await client.refund("k").catch(() => undefined);
      // (Deno's own fetch sends a request again when a reused connection closes before
      // its answer, which this server does after reading it; the client adds no attempt.)
      const sent = server.refunds();
      if (currentRuntime === "deno") assert.ok(sent >= 5 && sent <= 10, String(sent));
      else assert.equal(sent, 5);
    } finally {
      await server.stop();
    }
  });

  it("still fails, as the caller chose, when the new connection fails too", async () => {
    const refusing = createServer();
    await new Promise<void>((resolve) => refusing.listen(0, "127.0.0.1", resolve));
    const { port } = refusing.address() as { port: number };
    await new Promise<void>((resolve) => refusing.close(() => resolve()));
    const client = new Client({ url: `http://127.0.0.1:${port}`, onFailure: "throw" });
    await assert.rejects(
      client.check("k"),
      (e) => e instanceof ClientUnavailableError && e.code === "Unreachable",
    );
  });
});

describe("a client at steady load across many of the sidecar's idle timeouts", () => {
  it("sees no error", async () => {
    const sidecar: Sidecar = await startSidecar(["--limit", "1000/s", "--idle-timeout", "1s"]);
    try {
      const client = new Client({ url: sidecar.url, timeoutMs: 2_000, onFailure: "throw" });
      // Checks spaced about one idle timeout apart, a little either side, so
      // that some go out just as the sidecar closes the connection.
      for (let i = 0; i < 8; i++) {
        assert.equal((await client.check("k")).allowed, true, `check ${i}`);
        await new Promise((resolve) => setTimeout(resolve, 960 + (i % 5) * 20));
      }
    } finally {
      sidecar.process.kill();
    }
  });
});
