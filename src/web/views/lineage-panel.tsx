/**
 * The chain a session belongs to (`GET /sessions/{id}/lineage`): its root, compression
 * continuations and children (branches, handoffs, sub-runs) as a small nested list of
 * links, the current session marked. Shown in the transcript view when the session has a
 * parent or children; other tenants' sessions never appear (the server leaves them out).
 *
 * @module
 */
import { useEffect, useState } from "preact/hooks";
import { api } from "../api-client.js";
import type { Lineage, LineageNode } from "../api-types.js";
import { Untrusted } from "../components.js";
import { formatCount, formatTime, isoTime } from "../format.js";
import { href, onLinkClick } from "../router.js";

const RELATION: Record<LineageNode["relation"], string> = {
  root: "root",
  continuation: "continued after compression",
  child: "branch / handoff",
};

function NodeItem(props: { node: LineageNode; children: Map<string, LineageNode[]>; current: string }): preact.JSX.Element {
  const { node, current } = props;
  const kids = props.children.get(node.id) ?? [];
  const label = <Untrusted class={node.title === null ? "untitled" : "title"}>{node.title ?? node.id}</Untrusted>;
  return (
    <li class={`lineage-node relation-${node.relation}`} data-session-id={node.id}>
      {node.id === current ? (
        <strong class="lineage-current" aria-current="page">
          {label}
        </strong>
      ) : (
        <a href={href(["sessions", node.id])} onClick={onLinkClick}>
          {label}
        </a>
      )}
      <span class="meta lineage-meta">
        <span>{RELATION[node.relation]}</span>
        <span>{formatCount(node.messageCount)} messages</span>
        <time dateTime={isoTime(node.startedAt)}>{formatTime(node.startedAt)}</time>
        {node.endReason !== null ? <Untrusted>ended: {node.endReason}</Untrusted> : null}
      </span>
      {kids.length > 0 ? (
        <ul>
          {kids.map((k) => (
            <NodeItem key={k.id} node={k} children={props.children} current={current} />
          ))}
        </ul>
      ) : null}
    </li>
  );
}

/** The lineage of session `id` (nothing when it stands alone, or when the call fails: the transcript still shows). */
export function LineagePanel(props: { id: string }): preact.JSX.Element | null {
  const [lineage, setLineage] = useState<Lineage | null>(null);
  const [failed, setFailed] = useState<string | null>(null);

  useEffect(() => {
    const abort = new AbortController();
    setLineage(null);
    setFailed(null);
    api<Lineage>(`sessions/${encodeURIComponent(props.id)}/lineage`, { signal: abort.signal })
      .then(setLineage)
      .catch((e: unknown) => {
        if (!abort.signal.aborted) setFailed(e instanceof Error ? e.message : String(e));
      });
    return () => abort.abort();
  }, [props.id]);

  if (failed !== null) return <p class="error lineage-error">Lineage unavailable: {failed}</p>;
  if (lineage === null || lineage.nodes.length <= 1) return null;
  const ids = new Set(lineage.nodes.map((n) => n.id));
  const children = new Map<string, LineageNode[]>();
  const roots: LineageNode[] = [];
  for (const n of lineage.nodes) {
    if (n.parentSessionId === null || !ids.has(n.parentSessionId)) roots.push(n);
    else children.set(n.parentSessionId, [...(children.get(n.parentSessionId) ?? []), n]);
  }
  return (
    <nav class="lineage" aria-label="Lineage">
      <details open>
        <summary>Lineage ({lineage.nodes.length} sessions)</summary>
        <ul class="lineage-tree">
          {roots.map((r) => (
            <NodeItem key={r.id} node={r} children={children} current={props.id} />
          ))}
        </ul>
        {lineage.truncated ? <p class="meta">Only the first {lineage.nodes.length} sessions are shown.</p> : null}
      </details>
    </nav>
  );
}
