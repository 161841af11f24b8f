/**
 * `threadline sessions stats`: totals, sessions per source and the database size.
 *
 * The action of the command defined in stats-command.ts, loaded with `import()` only when the command runs.
 *
 * @module
 */
import { styles, table, useColor, writeJson, type CliIo } from "../../cli-output.js";
import { withExistingDatabase } from "../../cli-context.js";
import { formatBytes } from "../../byte-size.js";

interface StatsOptions {
  db?: string;
  json?: boolean;
}

/** Runs `stats`: the action of makeStatsCommand (in stats-command.ts), loaded when the command runs. */
export async function run(io: CliIo, options: StatsOptions): Promise<void> {
  await withExistingDatabase(options.db, io.env, async (db, where) => {
    const read = await db.getStats();
    // The default database not created yet: nothing stored, nothing on disk.
    const stats = where.notCreatedYet ? { ...read, databaseBytes: 0, searchIndexBytes: 0 } : read;
    if (options.json) {
      writeJson(io, {
        location: where.location,
        backend: db.capabilities.backend,
        totalSessions: stats.totalSessions,
        totalMessages: stats.totalMessages,
        sessionsBySource: stats.sessionsBySource,
        databaseBytes: stats.databaseBytes,
        searchIndexBytes: stats.searchIndexBytes,
        byModel: stats.byModel,
      });
      return;
    }
    const s = styles(useColor(io));
    const n = (v: number): string => v.toLocaleString("en-US");
    const size = `${formatBytes(stats.databaseBytes)}${stats.searchIndexBytes === null ? "" : ` (search index ${formatBytes(stats.searchIndexBytes)})`}`;
    const lines = [
      `${s.dim("Database")}  ${where.location} (${db.capabilities.backend}${where.notCreatedYet ? ", not created yet" : ""})`,
      `${s.dim("Size    ")}  ${size}`,
      `${s.dim("Sessions")}  ${n(stats.totalSessions)}`,
      `${s.dim("Messages")}  ${n(stats.totalMessages)}`,
    ];
    const bySource = Object.entries(stats.sessionsBySource).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
    if (bySource.length > 0) {
      const rows = table(
        ["Source", "Sessions"],
        bySource.map(([source, count]) => [source, n(count)]),
      )
        .split("\n")
        .map((line, i) => `  ${i === 0 ? s.bold(line) : line}`);
      lines.push("", "Sessions by source:", ...rows);
    }
    io.stdout.write(`${lines.join("\n")}\n`);
  });
}
