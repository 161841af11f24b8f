/**
 * `threadline pairing revoke <platform> <userId> [--json]`: removes a person's approval; their
 * next message is a stranger's again. A person who is not approved is "not found" (exit 3).
 *
 * The action of the command defined in revoke-command.ts, loaded with `import()` only when the command runs.
 *
 * @module
 */
import { NotFoundError } from "../../../store/index.js";
import { writeJson, type CliIo } from "../../cli-output.js";
import { withExistingDatabase } from "../../cli-context.js";
import { pairingDatabaseTarget } from "./pairing-database.js";
import { pairingPlatform, personText, printable } from "./pairing-text.js";

interface RevokeOptions {
  db?: string;
  config?: string;
  json?: boolean;
}

/** Runs `revoke`: the action of makePairingRevokeCommand (in revoke-command.ts), loaded when the command runs. */
export async function run(io: CliIo, typedPlatform: string, userId: string, options: RevokeOptions): Promise<void> {
  const platform = pairingPlatform(typedPlatform);
  await withExistingDatabase(await pairingDatabaseTarget(options, io.env), io.env, async (db) => {
    const before = (await db.listPairing({ platform })).approved.find((a) => a.userId === userId);
    const revoked = await db.revokePairing(platform, userId);
    if (!revoked) {
      throw new NotFoundError(
        `No approval of user ${printable(userId)} on ${platform}. Run "threadline pairing list --platform ${platform}" to see who is approved.`,
      );
    }
    const userName = before?.userName ?? null;
    if (options.json) {
      writeJson(io, { revoked: { platform, userId, userName } });
      return;
    }
    io.stdout.write(`Revoked ${personText(userId, userName)} on ${platform}: their next message is treated as a stranger's.\n`);
  });
}
