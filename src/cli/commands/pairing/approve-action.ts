/**
 * `threadline pairing approve <platform> <code> [--json]`: approves a pending pairing code, so
 * the person who was given it is answered from their next message on. The code is never
 * echoed back (stderr may end up in a log): an unknown code is "not found" (exit 3), a
 * platform locked out by failed approvals is refused (exit 4) with the time it ends.
 *
 * The action of the command defined in approve-command.ts, loaded with `import()` only when the command runs.
 *
 * @module
 */
import { NotFoundError } from "../../../store/index.js";
import { writeJson, type CliIo } from "../../cli-output.js";
import { CliError, withExistingDatabase } from "../../cli-context.js";
import { pairingDatabaseTarget } from "./pairing-database.js";
import { formatLocalDateTime } from "../../local-time.js";
import { durationText, pairingPlatform, personText } from "./pairing-text.js";

interface ApproveOptions {
  db?: string;
  config?: string;
  json?: boolean;
}

/** Runs `approve`: the action of makePairingApproveCommand (in approve-command.ts), loaded when the command runs. */
export async function run(io: CliIo, typedPlatform: string, code: string, options: ApproveOptions): Promise<void> {
  const platform = pairingPlatform(typedPlatform);
  await withExistingDatabase(await pairingDatabaseTarget(options, io.env), io.env, async (db) => {
    const now = Math.round(io.now() * 1000);
    const outcome = await db.approvePairingCode(platform, code, { by: "cli", now });
    if (outcome.kind === "locked-out") {
      throw new CliError(
        "TL_ERR_CONFLICT",
        `Approvals on ${platform} are locked after 5 failed attempts, until ${formatLocalDateTime(outcome.until / 1000)} ` +
          `(in ${durationText(outcome.until - now)}). Nothing was approved; try again then, with the code from "threadline pairing list --platform ${platform}".`,
      );
    }
    if (outcome.kind === "unknown-code") {
      throw new NotFoundError(
        `No pending pairing code on ${platform} matches what you typed (codes expire after an hour). ` +
          `Run "threadline pairing list --platform ${platform}" to see the pending ones. Each failed attempt counts: 5 lock approvals on ${platform} for an hour.`,
      );
    }
    const { approval } = outcome;
    if (options.json) {
      writeJson(io, { approved: approval });
      return;
    }
    io.stdout.write(`Approved ${personText(approval.userId, approval.userName)} on ${platform}. Their next message will be answered.\n`);
  });
}
