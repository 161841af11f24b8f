/**
 * `threadline pairing revoke <platform> <userId> [--json]`: removes a person's approval; their
 * next message is a stranger's again. A person who is not approved is "not found" (exit 3).
 *
 * @module
 */
import { Command } from "commander";
import { NotFoundError } from "../../../store/index.js";
import { writeJson, type CliIo } from "../../cli-output.js";
import { withExistingDatabase } from "../../cli-context.js";
import { dbOption, jsonOption } from "../../command-options.js";
import { pairingConfigOption, pairingDatabaseTarget } from "./pairing-database.js";
import { pairingPlatform, personText, printable } from "./pairing-text.js";

interface RevokeOptions {
  db?: string;
  config?: string;
  json?: boolean;
}

/** Builds `pairing revoke`. JSON: `{ "revoked": { "platform", "userId", "userName" } }` (see docs/cli.md). */
export function makePairingRevokeCommand(io: CliIo): Command {
  return new Command("revoke")
    .description("remove a person's approval: their next message is treated as a stranger's")
    .argument("<platform>", "telegram, slack, discord, whatsapp, signal or matrix")
    .argument("<userId>", 'the person\'s user id on that platform, as "threadline pairing list" shows it')
    .addOption(dbOption())
    .addOption(pairingConfigOption())
    .addOption(jsonOption())
    .action(async (typedPlatform: string, userId: string, options: RevokeOptions) => {
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
    });
}
