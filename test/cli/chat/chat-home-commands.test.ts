// `threadline chat` and home channels (issue 26, points 10 and 11), run in process (runCli) with
// piped input on a temp THREADLINE_HOME: `/sethome` is refused in the terminal, saying where to
// send it; `/handoff` refuses a platform Threadline does not know, naming the closest one.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openSessionDB } from "../../../src/store/index.js";
import { runPipedStatus, tempHome, type TempHome } from "./terminal.js";

describe("threadline chat: home channel commands", () => {
  let home: TempHome;
  beforeEach(() => {
    home = tempHome();
  });
  afterEach(() => {
    home.remove();
  });

  it("/sethome in the terminal is refused with where to send it; nothing is stored and /status does not invite it", async () => {
    const run = await runPipedStatus(home, ["chat"], "hello\n/sethome\n/status\n");
    expect(run.status).toBe(0);
    expect(run.stdout).not.toContain("This chat is now the cli home channel");
    expect(run.stdout).toMatch(
      /\/sethome works in a chat platform, not in the terminal: send it in the chat \(Telegram, Discord, Slack, WhatsApp, Matrix or Signal\) where handoffs from the terminal should arrive\./,
    );
    expect(run.stdout).not.toContain("Home channel (cli)");
    expect(run.stdout).toContain("Home channels: none; send /sethome in the chat platform's chat where handoffs should arrive");
    const db = await openSessionDB(home.dbPath);
    try {
      expect(await db.getMeta("home_channels")).toBeNull();
    } finally {
      await db.close();
    }
  });

  it("chat --help says /sethome is sent from a chat platform, not the terminal", async () => {
    const help = await runPipedStatus(home, ["chat", "--help"], "");
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/^ {2}\/sethome +not here: send it in the chat platform's chat where/mu);
  });

  it("/help in the terminal says /sethome is sent from a chat platform, and does not offer it here", async () => {
    const run = await runPipedStatus(home, ["chat"], "/help\n");
    expect(run.status).toBe(0);
    expect(run.stdout).toContain("/sethome — not here: send it in the chat platform's chat where handoffs should arrive");
    expect(run.stdout).not.toContain("/sethome — make this chat the home channel");
  });

  it("/handoff to a misspelt or unknown platform is refused with the closest name, before anything is recorded", async () => {
    const run = await runPipedStatus(home, ["chat"], "hello\n/handoff telegarm\n/handoff nosuch\n");
    expect(run.status).toBe(0);
    expect(run.stdout).toContain(
      'Unknown platform "telegarm". Did you mean "telegram"? Handoffs go to one of: telegram, discord, slack, whatsapp, matrix, signal, webhook.',
    );
    expect(run.stdout).toContain('Unknown platform "nosuch". Handoffs go to one of: telegram, discord, slack, whatsapp, matrix, signal, webhook.');
    expect(run.stdout).not.toContain("homeChannels.telegarm");
    expect(run.stdout).not.toContain("homeChannels.nosuch");
    const db = await openSessionDB(home.dbPath);
    try {
      expect(await db.claimHandoff({ platforms: ["telegarm", "nosuch"], holder: "probe" })).toBeNull();
    } finally {
      await db.close();
    }
  });
});
