/**
 * A session's family: its lineage (`GET /sessions/{id}/lineage`, the chain it belongs to as a
 * flat tree) and what deleting it would do (`GET /sessions/{id}/delete-preview`). A scoped key
 * sees only its tenant's sessions: another tenant's session is "not found", and other
 * tenants' sessions in a chain are left out of the tree.
 *
 * @module
 */
import type { FastifyPluginAsync } from "fastify";
import type { Session } from "../../store/index.js";
import { principalOf } from "../auth.js";
import { visibleSession, type ApiContext } from "../api-context.js";
import { deletePreviewSchema, errorSchema, idParams, lineageSchema } from "../schemas.js";

const notFound = { description: "No such session, or another tenant's (TL_ERR_NOT_FOUND).", schema: errorSchema };

/** Most nodes a lineage reply lists (the rest is cut, `truncated: true`). */
export const MAX_LINEAGE_NODES = 500;

/** How a node hangs from its parent. */
type Relation = "root" | "continuation" | "child";

interface LineageNode {
  id: string;
  parentSessionId: string | null;
  relation: Relation;
  title: string | null;
  source: string;
  model: string | null;
  startedAt: number;
  endedAt: number | null;
  endReason: string | null;
  messageCount: number;
}

function node(session: Session, relation: Relation): LineageNode {
  return {
    id: session.id,
    parentSessionId: relation === "root" ? null : session.parentSessionId,
    relation,
    title: session.title,
    source: session.source,
    model: session.model,
    startedAt: session.startedAt,
    endedAt: session.endedAt,
    endReason: session.endReason,
    messageCount: session.messageCount,
  };
}

/** The lineage and delete-preview routes. */
export const sessionLineageRoutes: FastifyPluginAsync<ApiContext> = async (api, { db, registry }) => {
  registry.add(api, {
    method: "GET",
    url: "/sessions/:id/lineage",
    operationId: "getSessionLineage",
    tag: "sessions",
    summary: "The chain a session belongs to, as a tree",
    description:
      "Every session of the session's family: from its root (the topmost ancestor) down through every descendant, breadth first, " +
      "as a flat list of nodes with parentSessionId and relation (root; continuation: the parent ended with reason compression; " +
      `child: a branch, handoff or sub-run). At most ${MAX_LINEAGE_NODES} nodes (truncated says when cut). A scoped key sees only its own sessions.`,
    params: idParams,
    responses: { 200: { description: "The family tree.", schema: lineageSchema }, 404: notFound },
    handler: async (request) => {
      const { id } = request.params as { id: string };
      const session = await visibleSession(db, request, id);
      const { userId } = principalOf(request);
      const visible = (s: Session): boolean => userId === null || s.userId === userId;
      // The topmost ancestor the caller may see; an invisible one cuts the chain there.
      let root = session;
      for (const ancestor of await db.getAncestors(id)) {
        if (!visible(ancestor)) break;
        root = ancestor;
      }
      const byId = new Map<string, Session>([[root.id, root]]);
      const nodes: LineageNode[] = [node(root, "root")];
      let truncated = false;
      for (const descendant of await db.getDescendants(root.id)) {
        const parent = descendant.parentSessionId === null ? undefined : byId.get(descendant.parentSessionId);
        // A descendant under an invisible (or cut) session is left out with it.
        if (parent === undefined || !visible(descendant)) continue;
        if (nodes.length >= MAX_LINEAGE_NODES) {
          truncated = true;
          break;
        }
        byId.set(descendant.id, descendant);
        nodes.push(node(descendant, parent.endReason === "compression" ? "continuation" : "child"));
      }
      return { sessionId: id, rootId: root.id, nodes, truncated };
    },
  });

  registry.add(api, {
    method: "GET",
    url: "/sessions/:id/delete-preview",
    operationId: "previewSessionDelete",
    tag: "sessions",
    summary: "What deleting a session would remove",
    description:
      "Changes nothing. DELETE /sessions/{id} removes the session and its messages; its direct children are kept and detached " +
      "(they become roots of their own chains). This lists both, so a confirmation can show them.",
    params: idParams,
    responses: { 200: { description: "The effect of a delete.", schema: deletePreviewSchema }, 404: notFound },
    handler: async (request) => {
      const { id } = request.params as { id: string };
      const session = await visibleSession(db, request, id);
      const { userId } = principalOf(request);
      const children = (await db.getDescendants(id)).filter((s) => s.parentSessionId === id);
      const visibleChildren = children.filter((s) => userId === null || s.userId === userId);
      return {
        session: { id: session.id, title: session.title, source: session.source, messageCount: session.messageCount },
        removes: { sessions: 1, messages: session.messageCount },
        // Children of another tenant are detached too, but only counted, never named.
        detaches: visibleChildren.map((s) => ({ id: s.id, title: s.title, source: s.source, messageCount: s.messageCount })),
        detachedOthers: children.length - visibleChildren.length,
      };
    },
  });
};
