/**
 * `pg` is an optional peer dependency: an install without it opens SQLite files as usual, and
 * a `postgres://` target fails with `DriverMissingError` (`TL_ERR_DRIVER_MISSING`) saying what
 * to install. Tested on a real install without `pg`: a temp folder with a copy of the BUILT
 * `dist/`, this package's `package.json`, and a `node_modules` that links every installed
 * package except `pg`, run in child processes.
 */
import { execFile } from "node:child_process";
import { cp, mkdir, mkdtemp, readdir, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
let install = "";

function run(args: string[], cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, args, { cwd, env: { ...process.env, THREADLINE_HOME: join(cwd, "home") } }, (error, stdout, stderr) =>
      resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

beforeAll(async () => {
  install = await mkdtemp(join(tmpdir(), "threadline-no-pg-"));
  await cp(join(ROOT, "dist"), join(install, "dist"), { recursive: true });
  await cp(join(ROOT, "package.json"), join(install, "package.json"));
  await mkdir(join(install, "node_modules"));
  for (const name of await readdir(join(ROOT, "node_modules"))) {
    if (name === "pg" || name === ".bin" || name.startsWith(".")) continue;
    await symlink(join(ROOT, "node_modules", name), join(install, "node_modules", name));
  }
});

afterAll(async () => {
  if (install !== "") await rm(install, { recursive: true, force: true });
});

describe("without the optional pg driver", () => {
  it("openSessionDB(postgres://…) rejects with DriverMissingError naming what to install; SQLite opens as usual", async () => {
    const script = `
      const { openSessionDB } = await import(${JSON.stringify(join(install, "dist/store/index.js"))});
      const out = {};
      try { await openSessionDB("postgres://127.0.0.1:5432/test"); out.pg = "opened"; }
      catch (e) { out.pg = { name: e.name, code: e.code, driver: e.driver, message: e.message }; }
      const db = await openSessionDB(${JSON.stringify(join(install, "state.db"))});
      const s = await db.createSession({ source: "cli" });
      out.sqlite = (await db.getSession(s.id))?.id === s.id;
      await db.close();
      console.log(JSON.stringify(out));`;
    const result = await run(["--input-type=module", "-e", script], install);
    expect(result.stderr).toBe("");
    const out = JSON.parse(result.stdout) as { pg: Record<string, string>; sqlite: boolean };
    expect(out.sqlite).toBe(true);
    expect(out.pg).toEqual({
      name: "DriverMissingError",
      code: "TL_ERR_DRIVER_MISSING",
      driver: "pg",
      message:
        "Opening a postgres:// database needs the PostgreSQL driver, which is not installed. Install it next to threadline (npm install pg) and try again.",
    });
  }, 60_000);

  it("the CLI says what to install and exits 1 for a postgres:// --db; SQLite commands still work", async () => {
    const pg = await run([join(install, "dist/cli/main.js"), "sessions", "list", "--db", "postgres://127.0.0.1:5432/test"], install);
    expect(pg.code).toBe(1);
    expect(pg.stderr).toContain("npm install pg");
    const file = join(install, "cli.db");
    const create = `const { openSessionDB } = await import(${JSON.stringify(join(install, "dist/store/index.js"))});
      const db = await openSessionDB(${JSON.stringify(file)}); await db.createSession({ source: "cli", title: "kept" }); await db.close();`;
    expect((await run(["--input-type=module", "-e", create], install)).code).toBe(0);
    const sqlite = await run([join(install, "dist/cli/main.js"), "sessions", "list", "--db", file], install);
    expect(sqlite.code, sqlite.stderr).toBe(0);
    expect(sqlite.stdout).toContain("kept");
  }, 60_000);
});
