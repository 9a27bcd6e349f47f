/**
 * Raw Slack Web API shapes, named after the Slack methods and objects, nullable like the real API
 * (profile fields a user never filled are missing or empty strings).
 *
 * https://docs.slack.dev/reference/objects/user-object
 */
import { z } from 'zod';
import { baseConfigSchema } from '../types.ts';

export const slackCredentialsSchema = z.object({
  /** A bot token (xoxb-...) of the Slack app installed in the workspace. */
  bot_token: z.string().regex(/^xox[bp]-/, 'expected a Slack bot token (xoxb-...)'),
});
export type SlackCredentials = z.infer<typeof slackCredentialsSchema>;

/** `base_url` is the Web API root (default https://slack.com/api/); Slack has no token endpoint to override. */
export const slackConfigSchema = baseConfigSchema.extend({
  /** Enterprise Grid: the workspace an org-wide app lists. */
  team_id: z.string().min(1).optional(),
  /**
   * Pace of users.profile.get calls (custom profile fields). The method is Tier 4 (100+ per
   * minute); the default stays at 100 so a large directory never trips the limit.
   */
  profile_requests_per_minute: z.number().positive().max(10_000).default(100),
});
export type SlackConfig = z.infer<typeof slackConfigSchema>;

const text = z.string().nullish();

/** The profile inside a user object (users.list) or returned by users.profile.get. */
export const SlackProfile = z.looseObject({
  real_name: text,
  display_name: text,
  first_name: text,
  last_name: text,
  title: text,
  phone: text,
  email: text,
  image_512: text,
  image_original: text,
  avatar_hash: text,
  is_custom_image: z.boolean().nullish(),
});

export const SlackUser = z.looseObject({
  id: z.string().min(1),
  team_id: text,
  name: text,
  real_name: text,
  deleted: z.boolean().nullish(),
  is_bot: z.boolean().nullish(),
  is_workflow_bot: z.boolean().nullish(),
  profile: SlackProfile,
});
export type SlackUser = z.infer<typeof SlackUser>;

const responseMetadata = z
  .looseObject({
    next_cursor: text,
    /** Added by @slack/web-api from the X-OAuth-Scopes header. */
    scopes: z.array(z.string()).nullish(),
  })
  .nullish();

/** https://docs.slack.dev/reference/methods/users.list */
export const SlackUsersList = z.looseObject({
  ok: z.literal(true),
  members: z.array(SlackUser),
  response_metadata: responseMetadata,
});

/** https://docs.slack.dev/reference/methods/team.profile.get: the workspace's custom profile field definitions. */
export const SlackTeamProfile = z.looseObject({
  ok: z.literal(true),
  profile: z.looseObject({
    fields: z.array(z.looseObject({ id: z.string().min(1), label: text, type: text })).nullish(),
  }),
});

/** https://docs.slack.dev/reference/methods/users.profile.get: custom fields keyed by field id. Slack sends `[]` or null when there are none. */
export const SlackUserProfile = z.looseObject({
  ok: z.literal(true),
  profile: z.looseObject({
    fields: z.union([z.record(z.string(), z.looseObject({ value: text, alt: text }).nullable()), z.array(z.unknown()).max(0)]).nullish(),
  }),
});

/** https://docs.slack.dev/reference/methods/users.lookupByEmail */
export const SlackLookupByEmail = z.looseObject({
  ok: z.literal(true),
  user: z.looseObject({ id: z.string().min(1), deleted: z.boolean().nullish(), is_bot: z.boolean().nullish() }),
});

/** https://docs.slack.dev/reference/methods/conversations.open */
export const SlackConversationsOpen = z.looseObject({
  ok: z.literal(true),
  channel: z.looseObject({ id: z.string().min(1) }),
});

/** https://docs.slack.dev/reference/methods/chat.postMessage */
export const SlackPostMessage = z.looseObject({
  ok: z.literal(true),
  channel: z.string().min(1),
  ts: z.string().min(1),
});

/** https://docs.slack.dev/reference/methods/auth.test */
export const SlackAuthTest = z.looseObject({
  ok: z.literal(true),
  team_id: text,
  user_id: text,
  response_metadata: responseMetadata,
});
