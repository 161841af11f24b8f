/**
 * `threadline/openai-agents`: a Threadline store as the session of the OpenAI Agents SDK
 * (`@openai/agents`, an optional peer dependency: this module takes only its types, so
 * importing Threadline never needs it installed).
 *
 * @example
 * import { Agent, run } from "@openai/agents";
 * import { openSessionDB } from "threadline";
 * import { ThreadlineSession } from "threadline/openai-agents";
 *
 * const db = await openSessionDB();
 * const session = new ThreadlineSession(db, { title: "Trip planning" });
 * await run(new Agent({ name: "Planner", instructions: "Be brief." }), "Three days in Oslo?", { session });
 *
 * @module
 */
export {
  OPENAI_AGENTS_SOURCE,
  ThreadlineSession,
  type ThreadlineSessionDB,
  type ThreadlineSessionOptions,
} from "./threadline-session.js";
export { itemToMessage, messageToItems } from "./agent-item-mapping.js";
