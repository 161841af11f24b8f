/**
 * `threadline pairing list [--platform P] [--json]`: the pending pairing codes (with who asked,
 * how long ago, and when each expires) and the approved people. The codes are shown: the
 * operator reads them here to approve them (never anywhere else: they are not logged).
 *
 * The action of the command defined in list-command.ts, loaded with `import()` only when the command runs.
 *
 * @module
 */
import { relativeTime, styles, table, truncate, useColor, writeJson, type CliIo } from "../../cli-output.js";
import { withExistingDatabase } from "../../cli-context.js";
import { pairingDatabaseTarget } from "./pairing-database.js";
import { durationText, pairingPlatform, printable } from "./pairing-text.js";

interface ListOptions {
  db?: string;
  config?: string;
  platform?: string;
  json?: boolean;
}

/** Runs `list`: the action of makePairingListCommand (in list-command.ts), loaded when the command runs. */
export async function run(io: CliIo, options: ListOptions): Promise<void> {
  const platform = options.platform === undefined ? undefined : pairingPlatform(options.platform);
  await withExistingDatabase(await pairingDatabaseTarget(options, io.env), io.env, async (db, where) => {
    const now = Math.round(io.now() * 1000);
    const list = await db.listPairing({ ...(platform === undefined ? {} : { platform }), now });
    if (options.json) {
      writeJson(io, { location: where.location, backend: db.capabilities.backend, ...list });
      return;
    }
    const s = styles(useColor(io));
    const scope = platform === undefined ? "" : ` on ${platform}`;
    const lines: string[] = [];
    if (list.pending.length === 0) lines.push(`No pending pairing codes${scope}.`);
    else {
      lines.push(s.bold(`Pending codes${scope} (${list.pending.length})`));
      const rows = list.pending.map((p) => [
        p.platform,
        p.code,
        printable(truncate(p.userId, 40)),
        p.userName === null ? "-" : printable(truncate(p.userName, 30)),
        relativeTime(p.createdAt / 1000, now / 1000),
        `in ${durationText(p.expiresAt - now)}`,
      ]);
      lines.push(
        ...table(["Platform", "Code", "User id", "Name", "Asked", "Expires"], rows)
          .split("\n")
          .map((l) => `  ${l}`),
      );
      lines.push(`  Approve one with: threadline pairing approve <platform> <code>`);
    }
    lines.push("");
    if (list.approved.length === 0) lines.push(`No one is approved${scope} yet.`);
    else {
      lines.push(s.bold(`Approved${scope} (${list.approved.length})`));
      const rows = list.approved.map((a) => [
        a.platform,
        printable(truncate(a.userId, 40)),
        a.userName === null ? "-" : printable(truncate(a.userName, 30)),
        relativeTime(a.approvedAt / 1000, now / 1000),
        a.approvedBy === null ? "-" : printable(a.approvedBy),
      ]);
      lines.push(
        ...table(["Platform", "User id", "Name", "Approved", "By"], rows)
          .split("\n")
          .map((l) => `  ${l}`),
      );
      lines.push(`  Revoke one with: threadline pairing revoke <platform> <userId>`);
    }
    io.stdout.write(`${lines.join("\n")}\n`);
  });
}
