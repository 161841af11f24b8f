/**
 * The page's views: one entry per view, matched in order against the path under the mount
 * point. To add a view: write `views/<name>-view.tsx`, add an entry here (its `pattern`,
 * a document `title`, and `nav` for a link in the header), done — the app shell renders it
 * and its nav link.
 *
 * @module
 */
import type { PageLocation } from "./router.js";
import { ExecutionsView, ExecutionView } from "./views/executions-view.js";
import { LiveView } from "./views/live-view.js";
import { MemoryListView, MemoryPersonView } from "./views/memory-view.js";
import { PairingView } from "./views/pairing-view.js";
import { SearchView } from "./views/search-view.js";
import { SessionsView } from "./views/sessions-view.js";
import { StatsView } from "./views/stats-view.js";
import { TranscriptView } from "./views/transcript-view.js";

/** One view of the page. */
export interface RouteDef {
  /** Path segments under the mount point; `:name` captures a segment (`sessions/:id`). */
  pattern: string;
  /** The document title (`Threadline — <title>`). */
  title: string;
  /** A header link to this view (views with parameters have none). */
  nav?: { label: string; path: readonly string[] };
  /** The view for the matched parameters and the current location. */
  render(params: Record<string, string>, location: PageLocation): preact.JSX.Element;
}

/** Every view, first match wins. */
export const ROUTES: readonly RouteDef[] = [
  { pattern: "", title: "Sessions", nav: { label: "Sessions", path: [] }, render: (_p, location) => <SessionsView location={location} /> },
  { pattern: "sessions", title: "Sessions", render: (_p, location) => <SessionsView location={location} /> },
  {
    pattern: "sessions/:id",
    title: "Transcript",
    render: (p, location) => <TranscriptView id={p["id"]!} key={p["id"]!} message={location.query.get("message")} />,
  },
  { pattern: "search", title: "Search", nav: { label: "Search", path: ["search"] }, render: (_p, location) => <SearchView location={location} /> },
  {
    pattern: "executions",
    title: "Executions",
    nav: { label: "Executions", path: ["executions"] },
    render: (_p, location) => <ExecutionsView location={location} />,
  },
  { pattern: "executions/:id", title: "Execution", render: (p) => <ExecutionView id={p["id"]!} key={p["id"]!} /> },
  { pattern: "stats", title: "Stats", nav: { label: "Stats", path: ["stats"] }, render: (_p, location) => <StatsView location={location} /> },
  { pattern: "live", title: "Gateway live", nav: { label: "Live", path: ["live"] }, render: () => <LiveView /> },
  { pattern: "pairing", title: "Pairing", nav: { label: "Pairing", path: ["pairing"] }, render: () => <PairingView /> },
  { pattern: "memory", title: "Memory", nav: { label: "Memory", path: ["memory"] }, render: () => <MemoryListView /> },
  {
    pattern: "memory/:platform/:userId",
    title: "Memory",
    render: (p) => <MemoryPersonView platform={p["platform"]!} userId={p["userId"]!} key={`${p["platform"]!}\u0000${p["userId"]!}`} />,
  },
];
