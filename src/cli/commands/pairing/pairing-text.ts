/**
 * What the `threadline pairing` commands share: the platform argument (one of the chat
 * platforms pairing applies to, else a usage error listing them), and stored names and ids
 * made safe for a terminal (they are untrusted text a stranger chose).
 *
 * @module
 */
import { PAIRING_PLATFORMS } from "../../../store/index.js";
import { CliError } from "../../cli-context.js";

/** The platform as typed (any case), or a usage error (exit 2) listing the platforms. */
export function pairingPlatform(typed: string): string {
  const platform = typed.trim().toLowerCase();
  if (!PAIRING_PLATFORMS.includes(platform)) {
    throw new CliError("TL_ERR_USAGE", `Unknown platform "${printable(typed)}". Pairing platforms: ${PAIRING_PLATFORMS.join(", ")}.`);
  }
  return platform;
}

/** Control characters as `?`, so stored text (a stranger's name) cannot drive the terminal. */
export function printable(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/gu, "?");
}

/** A person as the operator reads them: `Ann (user 42)`, or `user 42` without a name. */
export function personText(userId: string, userName: string | null): string {
  return userName === null || userName.trim() === "" ? `user ${printable(userId)}` : `${printable(userName)} (user ${printable(userId)})`;
}

/** A duration in milliseconds as `45m` / `1h 5m` / `30s`. */
export function durationText(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m`;
  return `${Math.floor(m / 60)}h${m % 60 === 0 ? "" : ` ${m % 60}m`}`;
}
