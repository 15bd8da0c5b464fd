/**
 * The npm package as its users get it: built and packed with `npm pack`,
 * then installed into fresh projects in the system's temporary directory,
 * outside the repository, and used there on plain Node.js (no tsx, no
 * loader), on Bun after `bun add`, and on Deno from the project's
 * `node_modules`; the `rateguard` command serves a request and stops on
 * SIGTERM on all three; `tsc` and `deno check` type-check a consumer against
 * the declarations. The README's sidecar commands run as written, read from
 * README.md: the Node.js and Bun lines with the tarball for the package's
 * name, the JSR line from a folder of what `deno publish` takes, each asked
 * the README's `curl` and answering what the README says.
 *
 * Not a `*_test.ts` file: it runs once, under Node, from
 * `scripts/test-all.sh` (JUnit report `package`), since each runtime is a
 * child process here. Installs prefer npm's cache; the registry is asked only
 * for what the cache lacks.
 *
 * @module
 */

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import {
  buildPackage,
  childEnv,
  footprintOf,
  freshProject,
  NPM_INSTALL,
  type Packed,
  packPackage,
  PEERS,
  readmeSize,
  REPO,
} from "../../scripts/npm_package.ts";
import { blocks } from "../support/markdown.ts";

const tool = (name: string) => join(REPO, "node_modules/.bin", name);
const TSC = join(REPO, "node_modules/typescript/bin/tsc");
const SUBPATHS = Object.keys(JSON.parse(readFileSync(join(REPO, "deno.json"), "utf8")).exports)
  .sort();
/** The subpaths that load with no peer installed. */
const BARE = [".", "./client", "./core", "./fetch", "./headers", "./sim"];

const env = childEnv();

/** The version of `name` the repository installed: what npm's cache holds. */
const installed = (name: string): string =>
  JSON.parse(readFileSync(join(REPO, "node_modules", name, "package.json"), "utf8")).version;
const PEER_SPECS = [...Object.keys(PEERS), "@types/node"].map((p) => `${p}@${installed(p)}`);

function sh(cwd: string, command: string, ...args: string[]): string {
  const r = spawnSync(command, args, { cwd, env, encoding: "utf8", timeout: 150_000 });
  assert.equal(
    r.status,
    0,
    `${command} ${args.join(" ")} in ${cwd}: ${r.error ?? r.signal ?? ""}\n${r.stdout}${r.stderr}`,
  );
  return r.stdout;
}

/** A fresh project holding the smoke script and the consumer. */
function project(name: string): string {
  const dir = freshProject(name);
  for (const file of ["smoke.mjs", "consumer.ts"]) {
    cpSync(join(REPO, "tests/package", file), join(dir, file));
  }
  return dir;
}

const smoked = (out: string) =>
  out.trim().split("\n").at(-1)?.replace(/^ok /, "").split(" ").sort();

/**
 * Starts the sidecar with `command` and `args` (in `childEnv`), hands its
 * URL to `use`, then sends SIGTERM and expects a clean exit: what `cli.ts`
 * does.
 */
async function withSidecar(
  cwd: string,
  childEnv: Record<string, string>,
  [command, ...args]: string[],
  use: (url: string) => Promise<void> | void,
): Promise<void> {
  const child: ChildProcess = spawn(command, args, {
    cwd,
    env: childEnv,
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  const kill = setTimeout(() => child.kill("SIGKILL"), 120_000);
  try {
    const url = await new Promise<string>((resolve, reject) => {
      child.stderr!.on("data", (chunk) => {
        stderr += chunk;
        const found = /listening http=(http:\/\/\S+)/.exec(stderr);
        if (found) resolve(found[1].replace(/\/$/, ""));
      });
      child.on("error", reject);
      void exited.then((code) =>
        reject(new Error(`${command} exited with ${code} before listening: ${stderr}`))
      );
    });
    await use(url);
  } finally {
    child.kill("SIGTERM");
    const code = await exited;
    clearTimeout(kill);
    assert.equal(code, 0, `${command}: exit status after SIGTERM: ${stderr}`);
    assert.match(stderr, /stopping signal=SIGTERM[\s\S]*stopped/);
  }
}

/** The sidecar of `command` admits, refuses and rejects as it should. */
function sidecar(cwd: string, ...command: string[]): Promise<void> {
  const flags = ["--limit", "1/min", "--http", "127.0.0.1:0"];
  return withSidecar(cwd, env, [...command, ...flags], async (url) => {
    const check = async (body: unknown) => {
      const res = await fetch(`${url}/v1/check`, { method: "POST", body: JSON.stringify(body) });
      return { status: res.status, json: await res.json() };
    };
    const first = await check({ key: "tenant:42" });
    assert.deepEqual([first.status, first.json.allowed], [200, true]);
    const second = await check({ key: "tenant:42" });
    assert.deepEqual([second.status, second.json.allowed], [200, false]);
    assert.ok(second.json.retryAfterMs > 0);
    const bad = await check({ key: "tenant:42", cost: "two" });
    assert.equal(bad.status, 400);
    assert.equal(bad.json.field, "/cost");
  });
}

/**
 * The README's sidecar block, read from README.md: each runtime's command
 * (an install, then the command that starts the sidecar), the `curl` that
 * asks it and the answer it documents.
 */
function readmeSidecar() {
  const readme = readFileSync(join(REPO, "README.md"), "utf8");
  const [block] = blocks("README.md", readme).filter((b) =>
    b.lang === "sh" && b.text.includes("jsr:@rateguard/guard/cli") && b.text.includes("/v1/check")
  );
  assert.ok(block, "the README's sidecar block");
  const lines = block.text.split("\n");
  const command = (runtime: RegExp) => {
    const found = lines.filter((l) => runtime.test(l));
    assert.equal(found.length, 1, `one command matching ${runtime} in README.md:${block.line}`);
    return found[0].replace(/\s+#.*$/, "");
  };
  const curl = lines.findIndex((l) => l.startsWith("curl "));
  assert.ok(curl >= 0 && lines[curl + 1]?.startsWith("# "), "a curl and its answer");
  return {
    deno: command(/^deno run -A jsr:@rateguard\/guard\/cli /),
    node: command(/^npm install @rateguard\/guard .* && exec node_modules\/.bin\/rateguard /),
    bun: command(/^bun add @rateguard\/guard .* && bunx --bun rateguard /),
    curl: lines[curl],
    answer: lines[curl + 1].slice(2),
  };
}

/**
 * Runs one of the README's sidecar lines as written in a fresh folder: its
 * install (`a && b`: the part before `&&`) through the shell, then its start
 * command spawned directly (`exec`'s meaning: the process named gets the
 * signal), with the checkout's deno, bun and bunx on the PATH. Only the port
 * moves: RATEGUARD_HTTP asks for a free one, and the README's curl is sent
 * there; its answer must be the README's.
 */
async function asWritten(cwd: string, line: string, curl: string, answer: string): Promise<void> {
  const runEnv = {
    ...env,
    PATH: `${join(REPO, "node_modules/.bin")}:${env.PATH}`,
    RATEGUARD_HTTP: "127.0.0.1:0",
    npm_config_prefer_offline: "true",
  };
  const parts = line.split(" && ");
  assert.ok(parts.length <= 2, line);
  if (parts.length === 2) {
    const r = spawnSync("sh", ["-c", parts[0]], {
      cwd,
      env: runEnv,
      encoding: "utf8",
      timeout: 150_000,
    });
    assert.equal(r.status, 0, `${parts[0]}: ${r.stdout}${r.stderr}`);
  }
  const command = parts.at(-1)!.replace(/^exec /, "").split(/\s+/);
  await withSidecar(cwd, runEnv, command, (url) => {
    const sent = curl.replace(/http:\/\/127\.0\.0\.1:7947/, url);
    assert.notEqual(sent, curl, "the README's curl asks 127.0.0.1:7947");
    const r = spawnSync("sh", ["-c", sent], {
      cwd,
      env: runEnv,
      encoding: "utf8",
      timeout: 30_000,
    });
    assert.equal(r.stdout.trim(), answer, `${sent}: ${r.stderr}`);
  });
}

const work = mkdtempSync(join(tmpdir(), "rateguard-pack-"));
let build: string;
let pkg: string;
let packed: Packed;

before(() => {
  // Built inside the repository (gitignored), where tsc finds the sources'
  // types; packed and installed outside it.
  mkdirSync(join(REPO, "build"), { recursive: true });
  build = mkdtempSync(join(REPO, "build", "npm-test-"));
  pkg = buildPackage(build);
  packed = packPackage(pkg, work);
});
after(() => {
  rmSync(build, { recursive: true, force: true });
  rmSync(work, { recursive: true, force: true });
});

test("npm publish --dry-run takes the generated manifest as it is", () => {
  const r = spawnSync("npm", ["publish", "--dry-run", "--offline"], {
    cwd: pkg,
    env,
    encoding: "utf8",
    timeout: 60_000,
  });
  assert.equal(r.status, 0, r.stderr);
  const { name, version } = JSON.parse(readFileSync(join(pkg, "package.json"), "utf8"));
  assert.match(r.stdout, new RegExp(`^\\+ ${name}@${version}$`, "m"));
  // Whatever npm would correct in the manifest, it warns about; only the
  // missing login of a dry run is expected.
  const warnings = r.stderr.split("\n").filter((l) => /npm warn/.test(l) && !/logged in/.test(l));
  assert.deepEqual(warnings, []);
  assert.match(r.stderr, /public access/);
});

describe("npm install of the tarball alone (the bare guard)", () => {
  let dir: string;
  before(() => {
    dir = project("bare");
    sh(dir, "npm", ...NPM_INSTALL, packed.tarball);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  test("installs the guard and nothing else, the size the README says", () => {
    const bare = footprintOf(dir);
    assert.deepEqual(bare.packages, ["@rateguard/guard"]);
    const stated = readmeSize(readFileSync(join(REPO, "README.md"), "utf8"));
    assert.ok(stated, "README states the package's size");
    const measured = [packed.bytes, packed.unpackedBytes, bare.bytes];
    const off = stated.map((s, i) => Math.abs(measured[i] / s - 1));
    assert.ok(
      off.every((x) => x <= 0.1),
      `README: ${stated.join(", ")} bytes; measured ${measured.join(", ")}: ` +
        `run \`npm run npm:size\` and copy its sentence into the README`,
    );
  });

  test("plain Node.js 20 or newer imports every subpath that needs no peer and uses it", () => {
    assert.match(sh(dir, "node", "--version"), /^v(2\d|[3-9]\d)\./);
    assert.deepEqual(smoked(sh(dir, "node", "smoke.mjs", "bare")), BARE);
  });

  test("source maps and declaration maps lead to the TypeScript shipped in the package", () => {
    const stack = sh(
      dir,
      "node",
      "--enable-source-maps",
      "--input-type=module",
      "-e",
      `import { Limit } from "@rateguard/guard";
       try { Limit.parse("ten a second"); } catch (e) { console.log(e.stack); }`,
    );
    const at = /\((\/[^)]*\/@rateguard\/guard\/src\/core\/limit\.ts):\d+:\d+\)/.exec(stack);
    assert.ok(at, `a stack frame in limit.ts: ${stack}`);
    assert.ok(existsSync(at[1]));
    const pkg = join(dir, "node_modules/@rateguard/guard");
    for (const map of ["dist/mod.js.map", "dist/mod.d.ts.map", "dist/src/client/mod.d.ts.map"]) {
      const { sources } = JSON.parse(readFileSync(join(pkg, map), "utf8"));
      for (const source of sources) assert.ok(existsSync(join(pkg, dirname(map), source)), source);
    }
  });

  test("the rateguard command says in one line what to install without hono", () => {
    const r = spawnSync(join(dir, "node_modules/.bin/rateguard"), ["--limit", "1/s"], {
      cwd: dir,
      env,
      encoding: "utf8",
      timeout: 60_000,
    });
    assert.equal(r.status, 1);
    assert.equal(
      r.stderr,
      "rateguard: the sidecar needs hono (and @hono/node-server on Node.js): npm install hono @hono/node-server\n",
    );
  });
});

test("npx runs the rateguard command from no project, with its peers named", () => {
  const dir = mkdtempSync(join(tmpdir(), "rateguard-npx-"));
  try {
    const peers = ["hono", "@hono/node-server"].map((p) => `${p}@${installed(p)}`);
    const help = sh(
      dir,
      "npx",
      "--yes",
      "--prefer-offline",
      ...[packed.tarball, ...peers].flatMap((p) => ["-p", p]),
      "rateguard",
      "--help",
    );
    assert.match(help, /--limit/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
    // npx installed into npm's cache, in _npx/<hash of the packages>: remove
    // the entry whose manifest names this run's tarball, and no other.
    const npx = join(sh(work, "npm", "config", "get", "cache").trim(), "_npx");
    for (const entry of existsSync(npx) ? readdirSync(npx) : []) {
      const manifest = join(npx, entry, "package.json");
      if (existsSync(manifest) && readFileSync(manifest, "utf8").includes(work)) {
        rmSync(join(npx, entry), { recursive: true, force: true });
      }
    }
  }
});

describe("npm install of the tarball with its peers", () => {
  let dir: string;
  before(() => {
    dir = project("npm");
    sh(dir, "npm", ...NPM_INSTALL, packed.tarball, ...PEER_SPECS);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  test("plain Node.js imports every subpath and uses it", () => {
    assert.deepEqual(smoked(sh(dir, "node", "smoke.mjs", "full")), SUBPATHS);
  });

  test("the rateguard command runs the sidecar on Node.js: npx, a request, SIGTERM", async () => {
    assert.match(sh(dir, "npx", "--offline", "rateguard", "--help"), /--limit/);
    const { version } = JSON.parse(readFileSync(join(REPO, "deno.json"), "utf8"));
    assert.equal(sh(dir, "npx", "--offline", "rateguard", "--version"), `rateguard ${version}\n`);
    await sidecar(dir, join(dir, "node_modules/.bin/rateguard"));
  });

  test("tsc type-checks a consumer of every subpath against the declarations", () => {
    writeFileSync(
      join(dir, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          module: "NodeNext",
          moduleResolution: "NodeNext",
          target: "ES2022",
          lib: ["ES2022", "DOM"],
          types: ["node"],
          noEmit: true,
        },
        files: ["consumer.ts"],
      }),
    );
    sh(dir, "node", TSC, "-p", "tsconfig.json");
  });

  test("Deno runs every subpath from node_modules and through npm:, and type-checks the consumer", () => {
    assert.deepEqual(smoked(sh(dir, tool("deno"), "run", "-A", "smoke.mjs", "full")), SUBPATHS);
    sh(dir, tool("deno"), "check", "consumer.ts");
    // An npm: specifier resolves to the same installed package.
    const viaSpecifier = `import { Guard } from "npm:@rateguard/guard";
      const guard = await Guard.builder().limit(1).burst(1).spawn();
      console.log(guard.check("k").allowed, guard.check("k").allowed);
      await guard.leave();`;
    assert.equal(sh(dir, tool("deno"), "eval", viaSpecifier).trim(), "true false");
  });

  test("Deno runs the rateguard command: a request, SIGTERM", async () => {
    await sidecar(dir, tool("deno"), "run", "-A", "node_modules/@rateguard/guard/bin/rateguard.js");
  });
});

describe("bun add of the tarball", () => {
  let dir: string;
  before(() => {
    dir = project("bun");
    sh(dir, tool("bun"), "add", packed.tarball);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  test("Bun imports every subpath that needs no peer, and all of them once they are added", () => {
    assert.deepEqual(smoked(sh(dir, tool("bun"), "smoke.mjs", "bare")), BARE);
    sh(dir, tool("bun"), "add", ...PEER_SPECS);
    assert.deepEqual(smoked(sh(dir, tool("bun"), "smoke.mjs", "full")), SUBPATHS);
  });

  test("bunx --bun rateguard runs the sidecar on Bun: a request, SIGTERM", async () => {
    await sidecar(dir, tool("bun"), "x", "--bun", "rateguard");
  });
});

describe("the README's sidecar commands, as written, on the packed package", () => {
  const readme = readmeSidecar();
  /** The command with the tarball for the package's name (`@rateguard/guard`), nothing else. */
  const fromTarball = (line: string) =>
    line.replace(
      /^(npm install|bun add) @rateguard\/guard /,
      (_m, tool) => `${tool} ${packed.tarball} `,
    );
  const dirs: string[] = [];
  after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

  test("the install table's sidecar column says what each command installs", () => {
    const table = readFileSync(join(REPO, "README.md"), "utf8").split("\n");
    const cell = (runtime: string) => {
      const row = table.find((l) => l.startsWith(`| ${runtime} `));
      assert.ok(row, `the install table's ${runtime} row`);
      return row.split("|")[4].trim();
    };
    const installs = (line: string) => line.split(" && ")[0].replace(" @rateguard/guard", "");
    assert.equal(cell("Node.js"), `\`${installs(readme.node)}\``);
    assert.equal(cell("Bun"), `\`${installs(readme.bun)}\``);
    assert.ok(!readme.deno.includes(" && "), readme.deno);
    assert.match(cell("Deno"), /^nothing: `jsr:@rateguard\/guard\/cli` brings its own$/);
  });

  test("Node.js: npm install, then exec node_modules/.bin/rateguard", async () => {
    const dir = freshProject("readme-node");
    dirs.push(dir);
    await asWritten(dir, fromTarball(readme.node), readme.curl, readme.answer);
  });

  test("Bun: bun add, then bunx --bun rateguard", async () => {
    const dir = freshProject("readme-bun");
    dirs.push(dir);
    await asWritten(dir, fromTarball(readme.bun), readme.curl, readme.answer);
  });

  test("Deno: jsr:@rateguard/guard/cli, run from the package as deno publish takes it", async () => {
    // JSR is out of reach here: the folder holds what deno.json's "publish"
    // includes, and its "./cli" export stands for jsr:@rateguard/guard/cli.
    // A JSR user's deno resolves the package's npm: imports itself, so the
    // folder's deno.json leaves out the checkout's nodeModulesDir.
    const deno = JSON.parse(readFileSync(join(REPO, "deno.json"), "utf8"));
    const dir = mkdtempSync(join(tmpdir(), "rateguard-jsr-"));
    dirs.push(dir);
    for (const entry of deno.publish.include as string[]) {
      const top = entry.replace(/\/\*\*\/\*\.ts$/, "");
      cpSync(join(REPO, top), join(dir, top), {
        recursive: true,
        filter: (from) => top === entry || !/\.[a-z]+$/.test(from) || from.endsWith(".ts"),
      });
    }
    delete deno.nodeModulesDir;
    writeFileSync(join(dir, "deno.json"), JSON.stringify(deno, null, 2));
    const line = readme.deno.replace("jsr:@rateguard/guard/cli", deno.exports["./cli"]);
    await asWritten(dir, line, readme.curl, readme.answer);
  });
});
