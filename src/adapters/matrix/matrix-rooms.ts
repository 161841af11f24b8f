/**
 * What the Matrix adapter knows of rooms ({@link MatrixRooms}): each room's name, topic,
 * joined members and encryption (from the SDK's room state when it has the full state, else
 * `GET /rooms/{id}/state`, cached), which rooms are direct (`m.direct` account data and
 * `is_direct` invites), encrypted rooms (one warning each; nothing is read or sent there) and
 * invitations (accepted unless `autoJoin` is false, only from `allowedUsers` and to
 * `allowedChats` when those are set; a DM invite is recorded in the bot's `m.direct`).
 *
 * @module
 */
import type { MatrixClient } from "matrix-js-sdk";
import type { GatewayLogger } from "../../gateway/index.js";
import type { AnswerRules } from "../chat/index.js";
import { MATRIX_PLATFORM, type MatrixRawEvent } from "./matrix-source.js";

type MatrixSdk = typeof import("matrix-js-sdk");

/** How many rooms' facts are cached. */
const ROOMS_CACHED = 2_000;

/** What the adapter keeps about a room. */
export interface RoomInfo {
  name: string | null;
  topic: string | null;
  members: Map<string, string | null>;
  encrypted: boolean;
}

/** What {@link MatrixRooms} works with. */
export interface MatrixRoomsOptions {
  client: MatrixClient;
  sdk: MatrixSdk;
  log: GatewayLogger;
  /** The error with the access token removed. */
  safe(error: unknown): Error;
  /** Whether the adapter is still receiving (the startup check stops when it is not). */
  receiving(): boolean;
}

/** The rooms the bot is in, as far as the adapter needs them. */
export class MatrixRooms {
  readonly #client: MatrixClient;
  readonly #sdk: MatrixSdk;
  readonly #log: GatewayLogger;
  readonly #safe: (error: unknown) => Error;
  readonly #receiving: () => boolean;
  /** Rooms listed in `m.direct` or joined from an `is_direct` invite. */
  readonly #direct = new Set<string>();
  /** The bot's `m.direct` account data as last seen (user id → room ids). */
  #directContent: Record<string, string[]> = {};
  readonly #rooms = new Map<string, Promise<RoomInfo>>();
  readonly #encrypted = new Set<string>();
  readonly #warnedEncrypted = new Set<string>();

  constructor(options: MatrixRoomsOptions) {
    this.#client = options.client;
    this.#sdk = options.sdk;
    this.#log = options.log;
    this.#safe = options.safe;
    this.#receiving = options.receiving;
  }

  /** Whether the room is known to be end-to-end encrypted. */
  isEncrypted(roomId: string): boolean {
    return this.#encrypted.has(roomId);
  }

  /**
   * A direct room: at most two joined members (the bot and one person), and listed in
   * `m.direct`, joined from an `is_direct` invite, or of exactly two members. A room with more
   * than two members is a group whatever `m.direct` says: a newcomer to a grown DM must not
   * land in its creator's DM session (and search with the creator's DM scope).
   */
  isDirect(roomId: string, info: RoomInfo): boolean {
    if (info.members.size > 2) return false;
    return this.#direct.has(roomId) || info.members.size === 2;
  }

  /** Takes the bot's `m.direct` account data (user id → room ids). */
  readDirect(content: Record<string, unknown>): void {
    const kept: Record<string, string[]> = {};
    for (const [userId, rooms] of Object.entries(content)) {
      if (!Array.isArray(rooms)) continue;
      kept[userId] = rooms.filter((id): id is string => typeof id === "string");
      for (const id of kept[userId]) this.#direct.add(id);
    }
    this.#directContent = kept;
  }

  /** Reads the bot's `m.direct` account data from the homeserver (a failure is logged: DMs are then recognised by their two members). */
  async loadDirect(): Promise<void> {
    try {
      const direct = await this.#client.getAccountDataFromServer(this.#sdk.EventType.Direct);
      if (direct) this.readDirect(direct as Record<string, unknown>);
    } catch (error) {
      this.#log.warn(
        { err: this.#safe(error), platform: MATRIX_PLATFORM },
        "matrix: could not read the m.direct account data (direct rooms are recognised by their two members)",
      );
    }
  }

  /** Records a room joined from a DM invite in the bot's `m.direct`, as the spec asks of the invitee's client. */
  async #recordDirect(roomId: string, inviter: string): Promise<void> {
    this.#direct.add(roomId);
    const rooms = this.#directContent[inviter] ?? [];
    if (rooms.includes(roomId)) return;
    const content = { ...this.#directContent, [inviter]: [...rooms, roomId] };
    this.#directContent = content;
    try {
      await this.#client.setAccountData(this.#sdk.EventType.Direct, content);
    } catch (error) {
      this.#log.warn({ err: this.#safe(error), platform: MATRIX_PLATFORM, roomId }, "matrix: could not record the new DM in the m.direct account data");
    }
  }

  /** The room's facts (cached; a failed lookup is not). */
  info(roomId: string): Promise<RoomInfo> {
    let info = this.#rooms.get(roomId);
    if (info === undefined) {
      info = this.#loadRoom(roomId);
      this.#rooms.set(roomId, info);
      info.catch(() => this.#rooms.delete(roomId));
      if (this.#rooms.size > ROOMS_CACHED) this.#rooms.delete(this.#rooms.keys().next().value!);
    }
    return info;
  }

  /** Forgets the cached facts of a room (its state changed). */
  forget(roomId: string): void {
    this.#rooms.delete(roomId);
  }

  /** A room's facts: from the SDK's room state when it has the full state (it saw the room's creation state), else `GET /rooms/{id}/state`. */
  async #loadRoom(roomId: string): Promise<RoomInfo> {
    const room = this.#client.getRoom(roomId);
    let info: RoomInfo;
    if (room !== null && room.currentState.getStateEvents("m.room.create", "") !== null) {
      const content = (type: string): Record<string, unknown> => room.currentState.getStateEvents(type, "")?.getContent() ?? {};
      const members = new Map<string, string | null>();
      for (const member of room.getJoinedMembers()) members.set(member.userId, member.events.member?.getContent()["displayname"] ?? null);
      info = {
        name: str(content("m.room.name")["name"]) ?? str(content("m.room.canonical_alias")["alias"]),
        topic: str(content("m.room.topic")["topic"]),
        members,
        encrypted: room.hasEncryptionStateEvent(),
      };
    } else {
      const events = await this.#client.roomState(roomId);
      const members = new Map<string, string | null>();
      let name: string | null = null;
      let alias: string | null = null;
      let topic: string | null = null;
      let encrypted = false;
      for (const event of events) {
        const content = (event.content ?? {}) as Record<string, unknown>;
        if (event.type === "m.room.member" && content["membership"] === "join" && event.state_key) members.set(event.state_key, str(content["displayname"]));
        else if (event.type === "m.room.name") name = str(content["name"]);
        else if (event.type === "m.room.canonical_alias") alias = str(content["alias"]);
        else if (event.type === "m.room.topic") topic = str(content["topic"]);
        else if (event.type === "m.room.encryption") encrypted = true;
      }
      info = { name: name ?? alias, topic, members, encrypted };
    }
    if (info.encrypted) this.markEncrypted(roomId);
    return info;
  }

  /** Startup: warns about every joined room that is encrypted (in the background). */
  async checkJoinedRooms(): Promise<void> {
    try {
      const { joined_rooms: rooms } = await this.#client.getJoinedRooms();
      for (const roomId of rooms) {
        if (!this.#receiving()) return;
        await this.info(roomId).catch((error: unknown) =>
          this.#log.debug?.({ err: this.#safe(error), platform: MATRIX_PLATFORM, roomId }, "matrix: could not read a room's state"),
        );
      }
    } catch (error) {
      this.#log.warn({ err: this.#safe(error), platform: MATRIX_PLATFORM }, "matrix: could not list the joined rooms");
    }
  }

  /** Notes an encrypted room (and warns about it once). */
  markEncrypted(roomId: string): void {
    this.#encrypted.add(roomId);
    if (this.#warnedEncrypted.has(roomId)) return;
    this.#warnedEncrypted.add(roomId);
    this.#log.warn(
      { platform: MATRIX_PLATFORM, roomId, encrypted: true },
      `matrix: room ${roomId} is end-to-end encrypted; Threadline cannot read or send there (encrypted rooms are not supported) — use an unencrypted room`,
    );
  }

  /** An invitation of the bot: joins unless `autoJoin` is false or the rules' allowlists leave the inviter or the room out. */
  async onInvite(roomId: string, event: MatrixRawEvent, rules: AnswerRules, autoJoin: boolean): Promise<void> {
    const room = this.#client.getRoom(roomId);
    if (room !== null && room.getMyMembership() !== "invite") return;
    const inviter = event.sender;
    const direct = event.content["is_direct"] === true;
    const fields = { platform: MATRIX_PLATFORM, roomId, inviter, direct };
    if (!autoJoin) {
      this.#log.info(fields, `matrix: invited to ${roomId} by ${inviter}; not joining (adapters.matrix.autoJoin is false)`);
      return;
    }
    if (rules.allowedUsers.length > 0 && !rules.allowedUsers.includes(inviter)) {
      this.#log.info(fields, `matrix: invited to ${roomId} by ${inviter}, who is not in adapters.matrix.allowedUsers; not joining`);
      return;
    }
    if (rules.allowedChats.length > 0 && !rules.allowedChats.includes(roomId)) {
      this.#log.info(fields, `matrix: invited to ${roomId}, which is not in adapters.matrix.allowedChats; not joining`);
      return;
    }
    try {
      await this.#client.joinRoom(roomId);
      if (direct) await this.#recordDirect(roomId, inviter);
      this.#rooms.delete(roomId);
      this.#log.info(fields, `matrix: joined ${roomId} (invited by ${inviter})`);
    } catch (error) {
      this.#log.warn({ ...fields, err: this.#safe(error) }, `matrix: could not join ${roomId}: ${this.#safe(error).message}`);
    }
  }
}

function str(value: unknown): string | null {
  return typeof value === "string" && value !== "" ? value : null;
}
