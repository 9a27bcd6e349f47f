/**
 * Raw Google API shapes, as the APIs answer them. Every field the API may leave out is optional
 * and nullable; the Directory API types several user fields as untyped JSON (`any` in the
 * discovery document: organizations, phones, addresses, ...), so their items are described
 * leniently here. Unknown keys are dropped by zod; the mapping reads only what is declared.
 *
 * Names follow the provider resources: GoogleUser is the Directory `User`, GmailSendAs the Gmail
 * `SendAs`, and so on.
 */
import { z } from 'zod';

const str = z.string().nullish();
const bool = z.boolean().nullish();

// ---------------------------------------------------------------------------------------------
// Directory API: users
// https://developers.google.com/workspace/admin/directory/reference/rest/v1/users

export const GoogleUserName = z.object({
  givenName: str,
  familyName: str,
  fullName: str,
  displayName: str,
});

/** organizations[]: https://developers.google.com/workspace/admin/directory/reference/rest/v1/users#UserOrganization */
export const GoogleUserOrganization = z.object({
  name: str,
  title: str,
  department: str,
  description: str,
  costCenter: str,
  location: str,
  symbol: str,
  domain: str,
  fullTimeEquivalent: z.number().nullish(),
  primary: bool,
  type: str,
  customType: str,
});

/** phones[], websites[], externalIds[], relations[], keywords[]: a typed value. */
export const GoogleUserTypedValue = z.object({
  value: str,
  type: str,
  customType: str,
  primary: bool,
});

/** emails[]. */
export const GoogleUserEmail = z.object({
  address: str,
  type: str,
  customType: str,
  primary: bool,
});

/** addresses[]. */
export const GoogleUserAddress = z.object({
  type: str,
  customType: str,
  formatted: str,
  streetAddress: str,
  extendedAddress: str,
  poBox: str,
  locality: str,
  region: str,
  postalCode: str,
  country: str,
  countryCode: str,
  primary: bool,
  sourceIsStructured: bool,
});

/** locations[]. */
export const GoogleUserLocation = z.object({
  type: str,
  customType: str,
  area: str,
  buildingId: str,
  floorName: str,
  floorSection: str,
  deskCode: str,
});

/**
 * customSchemas: `{ Schema: { Field: value } }`. A single-valued field is a string, number or
 * boolean; a multi-valued one is a list of `{ type, customType, value }`.
 */
export const GoogleCustomSchemaValue = z.union([
  z.string(),
  z.number(),
  z.boolean(),
  z.null(),
  z.array(z.object({ value: z.union([z.string(), z.number(), z.boolean()]).nullish(), type: str, customType: str })),
]);
export const GoogleCustomSchemas = z.record(z.string(), z.record(z.string(), GoogleCustomSchemaValue));

export const GoogleUser = z.object({
  id: z.string().min(1),
  primaryEmail: str,
  name: GoogleUserName.nullish(),
  suspended: bool,
  suspensionReason: str,
  archived: bool,
  isAdmin: bool,
  aliases: z.array(z.string()).nullish(),
  nonEditableAliases: z.array(z.string()).nullish(),
  orgUnitPath: str,
  thumbnailPhotoUrl: str,
  thumbnailPhotoEtag: str,
  customSchemas: GoogleCustomSchemas.nullish(),
  organizations: z.array(GoogleUserOrganization).nullish(),
  phones: z.array(GoogleUserTypedValue).nullish(),
  emails: z.array(GoogleUserEmail).nullish(),
  addresses: z.array(GoogleUserAddress).nullish(),
  externalIds: z.array(GoogleUserTypedValue).nullish(),
  relations: z.array(GoogleUserTypedValue).nullish(),
  websites: z.array(GoogleUserTypedValue).nullish(),
  keywords: z.array(GoogleUserTypedValue).nullish(),
  locations: z.array(GoogleUserLocation).nullish(),
});
export type GoogleUser = z.infer<typeof GoogleUser>;

/** users.list answer. */
export const GoogleUsersPage = z.object({
  kind: str,
  etag: str,
  users: z.array(GoogleUser).nullish(),
  nextPageToken: str,
});

// ---------------------------------------------------------------------------------------------
// Directory API: groups, members, org units, photos

export const GoogleGroup = z.object({
  id: z.string().min(1),
  email: str,
  name: str,
  description: str,
  aliases: z.array(z.string()).nullish(),
});
export type GoogleGroup = z.infer<typeof GoogleGroup>;

/** groups.list answer: https://developers.google.com/workspace/admin/directory/reference/rest/v1/groups/list */
export const GoogleGroupsPage = z.object({
  kind: str,
  etag: str,
  groups: z.array(GoogleGroup).nullish(),
  nextPageToken: str,
});

/** A group member; `type` is USER, GROUP or CUSTOMER (everyone in the account). */
export const GoogleMember = z.object({
  id: str,
  email: str,
  type: str,
  role: str,
  status: str,
});
export type GoogleMember = z.infer<typeof GoogleMember>;

/** members.list answer: https://developers.google.com/workspace/admin/directory/reference/rest/v1/members/list */
export const GoogleMembersPage = z.object({
  kind: str,
  etag: str,
  members: z.array(GoogleMember).nullish(),
  nextPageToken: str,
});

export const GoogleOrgUnit = z.object({
  orgUnitId: str,
  orgUnitPath: z.string().min(1),
  name: str,
  description: str,
  parentOrgUnitPath: str,
});

/** orgunits.list answer (not paged): https://developers.google.com/workspace/admin/directory/reference/rest/v1/orgunits/list */
export const GoogleOrgUnits = z.object({
  kind: str,
  etag: str,
  organizationUnits: z.array(GoogleOrgUnit).nullish(),
});

/** users.photos.get answer: https://developers.google.com/workspace/admin/directory/reference/rest/v1/users.photos */
export const GoogleUserPhoto = z.object({
  id: str,
  primaryEmail: str,
  etag: str,
  kind: str,
  mimeType: str,
  photoData: z.string(),
  width: z.number().nullish(),
  height: z.number().nullish(),
});

// ---------------------------------------------------------------------------------------------
// Gmail API: send-as addresses
// https://developers.google.com/workspace/gmail/api/reference/rest/v1/users.settings.sendAs

export const GmailSendAs = z.object({
  sendAsEmail: z.string().min(1),
  displayName: str,
  replyToAddress: str,
  signature: str,
  isPrimary: bool,
  isDefault: bool,
  treatAsAlias: bool,
  /** accepted | pending | verificationStatusUnspecified; absent on the primary address. */
  verificationStatus: str,
  /** SMTP relay settings of an external alias; never copied into what we keep. */
  smtpMsa: z.unknown().optional(),
});
export type GmailSendAs = z.infer<typeof GmailSendAs>;

export const GmailSendAsList = z.object({
  sendAs: z.array(GmailSendAs).nullish(),
});

// ---------------------------------------------------------------------------------------------
// Errors

/** A Google API error body: `{"error":{"code","message","status","errors":[{"domain","reason","message"}]}}`. */
export const GoogleApiErrorBody = z.object({
  error: z.object({
    code: z.number().nullish(),
    message: str,
    status: str,
    errors: z.array(z.object({ domain: str, reason: str, message: str })).nullish(),
  }),
});

/** An OAuth token endpoint error body: `{"error":"invalid_grant","error_description":"..."}`. */
export const GoogleTokenErrorBody = z.object({
  error: z.string(),
  error_description: str,
});
