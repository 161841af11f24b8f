/**
 * Pairing codes and the pairing limits, as pure rules (hermes-agent's `gateway/pairing.py`):
 * the alphabet, how a code is made, and how a typed code is read back. No storage here: the
 * store applies the limits (`core/pairing-steps.ts`).
 *
 * @example
 * const code = generatePairingCode();            // "K7MNP2QX"
 * normalizePairingCode(" k7mn-p2qx ") === code;  // true
 *
 * @module
 */
import { randomInt } from "node:crypto";

/** The characters of a code: upper-case letters and digits without the look-alikes 0, O, 1 and I. */
export const PAIRING_CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789";

/** How many characters a code has. */
export const PAIRING_CODE_LENGTH = 8;

/** The pairing limits, as the store applies them. */
export const PAIRING_LIMITS = {
  /** A code is accepted for this long after it was made (1 hour). */
  codeTtlMs: 60 * 60 * 1000,
  /** At most this many unexpired codes wait per platform. */
  maxPendingPerPlatform: 3,
  /** One code request per person per this long (10 minutes). */
  requestIntervalMs: 10 * 60 * 1000,
  /** This many failed approvals on a platform lock its approvals... */
  maxFailedApprovals: 5,
  /** ...for this long (1 hour). */
  lockoutMs: 60 * 60 * 1000,
} as const;

/** A new code: {@link PAIRING_CODE_LENGTH} characters of {@link PAIRING_CODE_ALPHABET}, from a cryptographic source. */
export function generatePairingCode(): string {
  let code = "";
  for (let i = 0; i < PAIRING_CODE_LENGTH; i++) code += PAIRING_CODE_ALPHABET[randomInt(PAIRING_CODE_ALPHABET.length)];
  return code;
}

/**
 * A code as typed (any case, with spaces or dashes) in its stored form, or `null` when it
 * cannot be a code (wrong length, or a character outside the alphabet).
 */
export function normalizePairingCode(typed: string): string | null {
  const code = typed.replace(/[\s-]+/gu, "").toUpperCase();
  if (code.length !== PAIRING_CODE_LENGTH) return null;
  for (const ch of code) if (!PAIRING_CODE_ALPHABET.includes(ch)) return null;
  return code;
}

/** The chat platforms pairing applies to (where a stranger can write to the bot). */
export const PAIRING_PLATFORMS: readonly string[] = Object.freeze(["telegram", "slack", "discord", "whatsapp", "signal", "matrix"]);
