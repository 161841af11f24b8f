/**
 * Display helpers of the page: times, numbers, costs, and the text of a message.
 *
 * @module
 */
import type { ContentPart, Message } from "./api-types.js";

/** Epoch seconds as a local date and time (`2025-03-01 14:30`). */
export function formatTime(seconds: number): string {
  const d = new Date(seconds * 1000);
  const pad = (n: number): string => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/** An ISO timestamp for `<time datetime>`. */
export function isoTime(seconds: number): string {
  return new Date(seconds * 1000).toISOString();
}

/** A count with thousands separators. */
export function formatCount(n: number): string {
  return n.toLocaleString("en-US");
}

/** A cost in US dollars (`$0.0123`). */
export function formatCost(usd: number): string {
  return usd >= 1 ? `$${usd.toFixed(2)}` : `$${usd.toFixed(4)}`;
}

/**
 * The text of a message's content: a string, the text parts joined, or `""`. Other parts are
 * named (`[image_url]`), except attachments, which the transcript shows on their own.
 */
export function contentText(content: Message["content"]): string {
  if (content === null) return "";
  if (typeof content === "string") return content;
  return content
    .filter((part: ContentPart) => part.type !== "attachment")
    .map((part: ContentPart) => (part.type === "text" && typeof part.text === "string" ? part.text : `[${part.type}]`))
    .join("\n");
}

/** A size in bytes, in binary units as people read them (`812 B`, `200 KB`, `3.4 MB`). */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${Math.round(bytes / 1024)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

/** Local date `YYYY-MM-DD` → epoch seconds at local midnight (`end`: the next midnight), or `null`. */
export function dayToSeconds(day: string | null, end = false): number | null {
  if (day === null || !/^\d{4}-\d{2}-\d{2}$/u.test(day)) return null;
  const [y, m, d] = day.split("-").map(Number) as [number, number, number];
  const date = new Date(y, m - 1, d + (end ? 1 : 0));
  return Number.isNaN(date.getTime()) ? null : date.getTime() / 1000;
}
