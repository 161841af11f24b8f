/**
 * `GET /healthz` of the gateway the service runs (status's last line).
 *
 * @module
 */

/** What `/healthz` answered. */
export interface HealthAnswer {
  /** The URL asked. */
  url: string;
  /** True for 200 with `status: "ok"`. */
  ok: boolean;
  /** `200 ok`, `503 …`, or why there was no answer (`connection refused`, …). */
  summary: string;
}

/** The address to reach a listening host at: a wildcard host is reached on loopback. */
export function reachableHost(host: string): string {
  if (host === "0.0.0.0" || host === "") return "127.0.0.1";
  if (host === "::" || host === "[::]") return "[::1]";
  return host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
}

/** Asks `http://<host>:<port>/healthz` (5 s at most); never rejects. */
export async function probeHealth(host: string, port: number): Promise<HealthAnswer> {
  const url = `http://${reachableHost(host)}:${port}/healthz`;
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(5_000) });
    const text = await response.text();
    let status = "";
    try {
      status = String((JSON.parse(text) as { status?: unknown }).status ?? "");
    } catch {
      status = "not JSON";
    }
    return { url, ok: response.status === 200 && status === "ok", summary: `${response.status} ${status}`.trim() };
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause;
    return { url, ok: false, summary: cause?.code === "ECONNREFUSED" ? "connection refused (not listening)" : (error as Error).message };
  }
}
