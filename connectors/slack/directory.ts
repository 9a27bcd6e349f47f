/**
 * Slack directory source: the workspace's members from users.list (limit 200, cursor paging).
 * Slack has no change feed for users, so every listing is a full one (`incremental: false`).
 *
 * Left out on purpose (DirectoryPage.skipped): USLACKBOT (`slackbot`), bots and workflow bots
 * (`bot`), and members without an email (`no_email`: guests invited without one, or a token
 * without users:read.email). Deactivated members (`deleted: true`) are returned with
 * `removed: true`.
 *
 * Attribute map (DirectoryUser.attributes; a key is present only when the value is not empty):
 *   real_name, display_name, first_name, last_name, title, phone, email, image_512   profile.<same>
 *   fields.<Label>, fields.<id>   custom profile fields, by the label the workspace gave them
 *                                 (team.profile.get) and by field id (Xf...), from users.profile.get
 *
 * Custom fields cost one users.profile.get per member (Tier 4), so they are fetched only when the
 * listing asks for an attribute under `fields.`, or asks for "everything" (attributes undefined),
 * and at most `profile_requests_per_minute` per minute. Other listings make no such call.
 *
 * https://docs.slack.dev/reference/methods/users.list
 * https://docs.slack.dev/reference/methods/users.profile.get
 * https://docs.slack.dev/reference/methods/team.profile.get
 */
import type { WebClient } from '@slack/web-api';
import {
  AccessLostError,
  defineDirectorySource,
  type DirectoryGroup,
  type DirectoryPage,
  type DirectorySource,
  type DirectoryUser,
  type FetchUsersOptions,
  MailboxError,
  parseProvider,
} from '../types.ts';
import { call, createSlackClient, Pacer } from './client.ts';
import {
  type SlackConfig,
  slackConfigSchema,
  slackCredentialsSchema,
  SlackAuthTest,
  SlackTeamProfile,
  type SlackUser,
  SlackUserProfile,
  SlackUsersList,
} from './schemas.ts';

export const SLACK_DIRECTORY_SCOPES = ['users:read', 'users:read.email', 'users.profile:read'] as const;
const PAGE_SIZE = 200;
const SLACKBOT = 'USLACKBOT';

function text(v: string | null | undefined): string | undefined {
  const t = v?.trim();
  return t ? t : undefined;
}

const PROFILE_ATTRIBUTES = ['real_name', 'display_name', 'first_name', 'last_name', 'title', 'phone', 'email', 'image_512'] as const;

export type MappedSlackUser = { user: DirectoryUser } | { skipped: { externalId: string; reason: string } };

/** One member as a clean DirectoryUser (see the attribute map at the top of this file). */
export function toDirectoryUser(m: SlackUser, customFields: Record<string, string> = {}): MappedSlackUser {
  if (m.id === SLACKBOT) return { skipped: { externalId: m.id, reason: 'slackbot' } };
  if (m.is_bot || m.is_workflow_bot) return { skipped: { externalId: m.id, reason: 'bot' } };
  const p = m.profile;
  const email = text(p.email) ?? null;
  const removed = m.deleted === true;
  if (!email && !removed) return { skipped: { externalId: m.id, reason: 'no_email' } };

  const attributes: Record<string, string> = {};
  for (const key of PROFILE_ATTRIBUTES) {
    const v = text(p[key]);
    if (v !== undefined) attributes[key] = v;
  }
  Object.assign(attributes, customFields);

  // A member who never uploaded a picture has Slack's generated avatar: no photo to copy.
  const image = text(p.image_512) ?? text(p.image_original);
  const photo = image && p.is_custom_image !== false ? { url: image, ...(text(p.avatar_hash) ? { etag: text(p.avatar_hash)! } : {}) } : null;
  const givenName = text(p.first_name) ?? null;
  const familyName = text(p.last_name) ?? null;
  return {
    user: {
      externalId: m.id,
      primaryEmail: email,
      aliases: [],
      givenName,
      familyName,
      displayName: text(p.real_name) ?? text(m.real_name) ?? text(p.display_name) ?? ([givenName, familyName].filter(Boolean).join(' ') || email || m.id),
      removed,
      attributes,
      groups: [],
      orgUnits: [],
      photo,
    },
  };
}

export class SlackDirectory implements DirectorySource {
  readonly incremental = false;
  private readonly client: WebClient;
  private readonly pacer: Pacer;
  private labels: Promise<Map<string, string>> | undefined;

  constructor(client: WebClient, config: SlackConfig) {
    this.client = client;
    this.pacer = new Pacer(config.profile_requests_per_minute);
  }

  /** https://docs.slack.dev/reference/methods/auth.test */
  async checkAccess(): Promise<void> {
    const res = parseProvider(SlackAuthTest, await call('auth.test', () => this.client.auth.test()), 'Slack auth.test');
    this.requireEmailScope(res.response_metadata?.scopes);
  }

  /** Slack's user groups are not synced; signature scopes use emails. */
  async listGroups(): Promise<DirectoryGroup[]> {
    return [];
  }

  /**
   * Without users:read.email every member would come back without an address and be skipped, and a
   * full listing would then remove everyone: refuse instead, as lost access.
   */
  private requireEmailScope(scopes: readonly string[] | null | undefined): void {
    if (scopes && !scopes.includes('users:read.email')) {
      throw new AccessLostError('the Slack bot token lacks the users:read.email scope', { providerCode: 'missing_scope' });
    }
  }

  async fetchUsersPage(opts: FetchUsersOptions): Promise<DirectoryPage> {
    const res = parseProvider(
      SlackUsersList,
      await call('users.list', () => this.client.users.list({ limit: PAGE_SIZE, ...(opts.pageToken ? { cursor: opts.pageToken } : {}) })),
      'Slack users.list',
    );
    this.requireEmailScope(res.response_metadata?.scopes);
    const wantFields = opts.attributes === undefined || opts.attributes.some((a) => a.startsWith('fields.'));
    const page: DirectoryPage = { users: [], removedIds: [], skipped: [], nextPageToken: text(res.response_metadata?.next_cursor) ?? null };
    for (const member of res.members) {
      let mapped = toDirectoryUser(member);
      if (wantFields && 'user' in mapped && !mapped.user.removed) mapped = toDirectoryUser(member, await this.customFields(member.id));
      if ('user' in mapped) page.users.push(mapped.user);
      else page.skipped.push(mapped.skipped);
    }
    return page;
  }

  /** Field id -> label, from the workspace's profile definition (once per source instance). */
  private fieldLabels(): Promise<Map<string, string>> {
    this.labels ??= (async () => {
      const res = parseProvider(SlackTeamProfile, await call('team.profile.get', () => this.client.team.profile.get()), 'Slack team.profile.get');
      return new Map((res.profile.fields ?? []).flatMap((f) => (text(f.label) ? [[f.id, text(f.label)!] as const] : [])));
    })().catch((err: unknown) => {
      this.labels = undefined;
      throw err;
    });
    return this.labels;
  }

  private async customFields(userId: string): Promise<Record<string, string>> {
    const labels = await this.fieldLabels();
    await this.pacer.wait();
    let res;
    try {
      res = parseProvider(SlackUserProfile, await call('users.profile.get', () => this.client.users.profile.get({ user: userId })), 'Slack users.profile.get');
    } catch (err) {
      // The member left between users.list and this call: no custom fields.
      if (err instanceof MailboxError && err.code === 'user_not_found') return {};
      throw err;
    }
    const out: Record<string, string> = {};
    const fields = res.profile.fields;
    if (!fields || Array.isArray(fields)) return out;
    for (const [id, field] of Object.entries(fields)) {
      const v = text(field?.value);
      if (v === undefined) continue;
      out[`fields.${id}`] = v;
      const label = labels.get(id);
      if (label) out[`fields.${label}`] = v;
    }
    return out;
  }
}

export const slackDirectorySource = defineDirectorySource({
  kind: 'slack',
  scopes: SLACK_DIRECTORY_SCOPES,
  configSchema: slackConfigSchema,
  credentialsSchema: slackCredentialsSchema,
  create: (ctx) => new SlackDirectory(createSlackClient(ctx), ctx.config),
});
