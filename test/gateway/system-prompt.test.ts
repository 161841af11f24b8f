/**
 * The system prompt of a gateway session (issue 26, points 7 and 8): the agent's tool
 * guidance is part of the context prompt, and the session stores what the model was given
 * without the per-turn notices, written on the first turn and again when it changes.
 */
import { expect, it } from "vitest";
import { LocalAdapter } from "../../src/adapters/index.js";
import type { Agent, AgentTurnInput, AgentTurnResult } from "../../src/agents/index.js";
import { GatewayRunner, SessionRouter } from "../../src/gateway/index.js";
import { forEachBackend } from "./backends.js";

const GUIDANCE = "Look things up with lookup_notes before asking the user again.";

/** An agent that records its inputs and says how to use its one tool. */
class RecordingAgent implements Agent {
  readonly name = "recording";
  readonly inputs: AgentTurnInput[] = [];
  constructor(readonly guidance: string[] = []) {}
  promptGuidance(): readonly string[] {
    return this.guidance;
  }
  async runTurn(input: AgentTurnInput): Promise<AgentTurnResult> {
    this.inputs.push(input);
    return { messages: [{ role: "assistant", content: `ok ${this.inputs.length}` }] };
  }
}

forEachBackend((backend) => {
  async function setup(guidance: string[] = []) {
    const { db } = await backend.fresh();
    const local = new LocalAdapter();
    const agent = new RecordingAgent(guidance);
    const runner = new GatewayRunner({ store: new SessionRouter({ db }), agentFactory: () => agent, adapters: [local], titler: null });
    await runner.start();
    return { db, local, agent, runner };
  }

  it("7. the agent's tool guidance is part of the context prompt; an agent without guidance adds nothing", async () => {
    const withGuidance = await setup([GUIDANCE]);
    await withGuidance.local.receive("hello");
    await withGuidance.local.nextMessage((d) => d.message.kind === "reply");
    expect(withGuidance.agent.inputs[0]!.contextPrompt).toMatch(/^## Current Session Context\n/u);
    expect(withGuidance.agent.inputs[0]!.contextPrompt.split("\n")).toContain(GUIDANCE);
    await withGuidance.runner.stop();

    const without = await setup();
    await without.local.receive("hello");
    await without.local.nextMessage((d) => d.message.kind === "reply");
    expect(without.agent.inputs[0]!.contextPrompt).not.toContain("lookup_notes");
    await without.runner.stop();
  });

  it("8. the session stores the context prompt without per-turn notices, and rewrites it only when it changes", async () => {
    const { db, local, agent, runner } = await setup([GUIDANCE]);
    await local.receive("hello");
    const first = (await local.nextMessage((d) => d.message.kind === "reply")).message.sessionId!;
    const given = agent.inputs[0]!.contextPrompt;
    expect((await db.getSession(first))!.systemPrompt).toBe(given);

    // Another turn with the same prompt, then a changed display name: the stored prompt follows.
    await local.receive("again");
    await local.nextMessage((d) => d.message.kind === "reply");
    expect(agent.inputs[1]!.contextPrompt).toBe(given);
    await local.receive("renamed", { userName: "Renamed user" });
    await local.nextMessage((d) => d.message.kind === "reply");
    expect(agent.inputs[2]!.contextPrompt).toContain("Renamed user");
    expect((await db.getSession(first))!.systemPrompt).toBe(agent.inputs[2]!.contextPrompt);

    // /stop suspends the chat: the next message starts a new session whose first turn carries the
    // reset notice for the model. The stored prompt leaves that per-turn notice out.
    await local.receive("/stop");
    await local.nextMessage();
    await local.receive("after the stop", { userName: "Renamed user" });
    const second = (await local.nextMessage((d) => d.message.kind === "reply")).message.sessionId!;
    expect(second).not.toBe(first);
    const withNotice = agent.inputs[3]!.contextPrompt;
    const stored = (await db.getSession(second))!.systemPrompt!;
    expect(withNotice.length).toBeGreaterThan(stored.length);
    expect(withNotice.startsWith(`${stored}\n\n`)).toBe(true);
    expect(stored).toBe(agent.inputs[2]!.contextPrompt);
    await runner.stop();
  });
});
