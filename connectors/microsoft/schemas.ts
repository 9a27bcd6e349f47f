/**
 * Raw Microsoft Graph shapes, named after the Graph resources. Fields are nullable like the real
 * API: /users returns null for selected properties without a value, and /users/delta leaves out
 * properties that were never set, so every property is `nullish`.
 *
 * https://learn.microsoft.com/graph/api/resources/user
 */
import { z } from 'zod';
import { baseConfigSchema } from '../types.ts';

/** App-only client credentials of an Entra app registration. */
export const microsoftCredentialsSchema = z.object({
  tenant_id: z.string().min(1),
  client_id: z.string().min(1),
  client_secret: z.string().min(1),
});
export type MicrosoftCredentials = z.infer<typeof microsoftCredentialsSchema>;

/** A directory extension property name, e.g. `extension_b7d8e648520f41d3b9c0fdeb91768a0a_costCenter`. */
const extensionName = z.string().regex(/^extension_[0-9a-f]{32}_\w+$/i, 'expected extension_<app id without dashes>_<name>');

/**
 * Integration config. `base_url` is the Graph root with its version (default
 * https://graph.microsoft.com/v1.0); `token_url` is the authority host (default
 * https://login.microsoftonline.com), and the token endpoint is {token_url}/{tenant}/oauth2/v2.0/token.
 * Both must be https: the Graph SDK attaches the bearer token only to https URLs.
 */
export const microsoftConfigSchema = baseConfigSchema.extend({
  /** Graph beta root for the Outlook install; defaults to base_url with its version segment replaced by `beta`. */
  beta_url: z.url().optional(),
  /** Directory extension attributes to read, by their full Graph name. */
  extension_attributes: z.array(extensionName).default([]),
  /** Largest signature HTML the Outlook install writes (characters). Default 8,000. */
  max_html_length: z.number().int().positive().max(100_000).optional(),
  /**
   * A PEM certificate this integration's Graph and token requests trust instead of the public CAs
   * (a private cloud gateway, the sandbox's loopback emulator). Unset: the system's CAs.
   */
  ca_cert: z.string().startsWith('-----BEGIN CERTIFICATE-----').optional(),
  /**
   * Outlook (`signatures`): `addin` (the default for new integrations) serves the signature to the
   * Outlook add-in at compose time; `owa` writes OWA.UserOptions, which reaches Outlook only in
   * tenants that postponed roaming signatures (docs/microsoft-and-slack.md).
   */
  mode: z.enum(['addin', 'owa'], { error: 'addin (the Outlook add-in) or owa (write OWA.UserOptions)' }).optional(),
});
export type MicrosoftConfig = z.infer<typeof microsoftConfigSchema>;

/** `@removed` on a delta item: `changed` (soft-deleted, restorable) or `deleted` (gone for good). */
export const GraphRemoved = z.object({ reason: z.string() });

/** microsoft.graph.user with the properties we $select; extension attributes arrive as extra keys. */
export const GraphUser = z.looseObject({
  id: z.string().min(1),
  displayName: z.string().nullish(),
  givenName: z.string().nullish(),
  surname: z.string().nullish(),
  jobTitle: z.string().nullish(),
  department: z.string().nullish(),
  companyName: z.string().nullish(),
  mail: z.string().nullish(),
  userPrincipalName: z.string().nullish(),
  businessPhones: z.array(z.string()).nullish(),
  mobilePhone: z.string().nullish(),
  officeLocation: z.string().nullish(),
  proxyAddresses: z.array(z.string()).nullish(),
  accountEnabled: z.boolean().nullish(),
  /** Only on /users/delta items. */
  '@removed': GraphRemoved.optional(),
});
export type GraphUser = z.infer<typeof GraphUser>;

/**
 * A mailbox's purpose, as `GET /users/{id}/mailboxSettings/userPurpose` answers it:
 * {"@odata.context": "...", "value": "shared"}; one of user, linked, shared, room, equipment, others.
 * https://learn.microsoft.com/graph/api/resources/mailboxsettings#userpurpose-values
 */
export const GraphUserPurpose = z.looseObject({ value: z.string().nullish() });

/** A page of a Graph collection: `@odata.nextLink` while more pages follow, `@odata.deltaLink` at the end of a delta round. */
function collection<T extends z.ZodType>(item: T) {
  return z.object({
    '@odata.context': z.string().optional(),
    '@odata.nextLink': z.url().optional(),
    '@odata.deltaLink': z.url().optional(),
    value: z.array(item),
  });
}

export const GraphUserCollection = collection(GraphUser);
export type GraphUserCollection = z.infer<typeof GraphUserCollection>;

/** microsoft.graph.group, as much as a signature scope needs. */
export const GraphGroup = z.object({
  id: z.string().min(1),
  displayName: z.string().nullish(),
  mail: z.string().nullish(),
});
export const GraphGroupCollection = collection(GraphGroup);

/** A member of /groups/{id}/transitiveMembers: users, groups, devices, service principals... */
export const GraphDirectoryObject = z.looseObject({
  '@odata.type': z.string().optional(),
  id: z.string().min(1),
});
export const GraphDirectoryObjectCollection = collection(GraphDirectoryObject);

/** Graph's error body: {"error":{"code","message","innerError":{...}}}. */
export const GraphErrorBody = z.object({
  error: z.looseObject({
    code: z.string(),
    message: z.string().nullish(),
  }),
});

/**
 * Beta userConfiguration (a folder associated item). structuredData is a list of typed key/value
 * pairs; `values` holds one string, or several for stringArray.
 * https://learn.microsoft.com/graph/api/resources/userconfiguration?view=graph-rest-beta
 */
export const StructuredDataEntryTypedValue = z.looseObject({
  type: z.string(),
  values: z.array(z.string()).nullish(),
});
export const StructuredDataEntry = z.looseObject({
  keyEntry: StructuredDataEntryTypedValue,
  valueEntry: StructuredDataEntryTypedValue,
});
export type StructuredDataEntry = z.infer<typeof StructuredDataEntry>;
export const UserConfiguration = z.looseObject({
  id: z.string().nullish(),
  structuredData: z.array(StructuredDataEntry).nullish(),
});
