/**
 * The mailbox part of the emulated Microsoft 365 tenant: the beta mailbox configuration item
 * OWA.UserOptions (get, create, update) in which Outlook on the web keeps its signature, the
 * mailbox's settings as far as its purpose (`GET /v1.0/users/{id}/mailboxSettings/userPurpose`, and
 * `/mailboxSettings` with it), which tells a shared mailbox from a person's, and the Graph error body
 * every route answers with.
 */
import crypto from 'node:crypto';
import type { Reply, Route } from './http.ts';
import type { GraphUserRaw, MicrosoftTenant, StructuredEntry } from './microsoftTenant.ts';

export const graphError = (status: number, code: string, message: string, headers?: Record<string, string>): Reply => ({
  status,
  body: {
    error: { code, message, innerError: { date: new Date().toISOString(), 'request-id': crypto.randomUUID(), 'client-request-id': crypto.randomUUID() } },
  },
  ...(headers ? { headers } : {}),
});

const cleanEntries = (raw: unknown): StructuredEntry[] =>
  (Array.isArray(raw) ? raw : []).map((e: { keyEntry?: { type?: string; values?: string[] }; valueEntry?: { type?: string; values?: string[] } }) => ({
    keyEntry: { type: e.keyEntry?.type ?? 'string', values: e.keyEntry?.values ?? [] },
    valueEntry: { type: e.valueEntry?.type ?? 'string', values: e.valueEntry?.values ?? [] },
  }));

const annotate = (entries: StructuredEntry[]) =>
  entries.map((e) => ({
    '@odata.type': '#microsoft.graph.structuredDataEntry',
    keyEntry: { '@odata.type': '#microsoft.graph.structuredDataEntryTypedValue', ...e.keyEntry },
    valueEntry: { '@odata.type': '#microsoft.graph.structuredDataEntryTypedValue', ...e.valueEntry },
  }));

export interface MailboxDeps {
  tenant: MicrosoftTenant;
  /** The emulator's base URL (known once it listens). */
  base: () => string;
  /** A reply refusing the request's bearer token, or null when it is valid. */
  checkBearer: (auth: string | undefined) => Reply | null;
  findUser: (key: string) => GraphUserRaw | undefined;
  /** A configuration item was written for this user. */
  onWrite: (u: GraphUserRaw) => void;
}

/** The user a mailbox route names, or the Graph error: a refused bearer token, no such user, or no mailbox. */
type MailboxOf = (authorization: string | undefined, userKey: string) => { user: GraphUserRaw } | Reply;

/** The routes of the mailbox settings and of the OWA.UserOptions configuration item. */
export function mailboxRoutes(deps: MailboxDeps): Route[] {
  const { tenant, checkBearer, findUser } = deps;
  const mailboxItem: MailboxOf = (authorization, userKey) => {
    const denied = checkBearer(authorization);
    if (denied) return denied;
    const u = findUser(userKey);
    if (!u) return graphError(404, 'ErrorInvalidUser', `The requested user '${decodeURIComponent(userKey)}' is invalid.`);
    if (tenant.noMailbox.has(u.id))
      return graphError(404, 'MailboxNotEnabledForRESTAPI', 'The mailbox is either inactive, soft-deleted, or is hosted on-premise.');
    return { user: u };
  };
  return [mailboxSettingsRoute(deps, mailboxItem), ...userConfigurationRoutes(deps, mailboxItem)];
}

/** `GET /v1.0/users/{id}/mailboxSettings` and `.../mailboxSettings/userPurpose`. */
function mailboxSettingsRoute({ tenant, base }: MailboxDeps, mailboxItem: MailboxOf): Route {
  return {
    // https://learn.microsoft.com/graph/api/user-get-mailboxsettings: the whole settings, or one of them.
    method: 'GET',
    pattern: /^\/v1\.0\/users\/([^/]+)\/mailboxSettings(\/userPurpose)?$/,
    name: 'mailboxSettings.get',
    handler: ({ req }, m) => {
      const found = mailboxItem(req.headers.authorization, m[1]!);
      if ('status' in found) return found;
      const refused = tenant.mailboxSettingsErrors?.get(found.user.id);
      if (refused === 400) return graphError(400, 'ErrorInvalidRequest', 'The request is invalid.');
      if (refused === 503) return graphError(503, 'ServiceUnavailable', 'The service is temporarily unavailable.');
      const purpose = found.user.userPurpose ?? 'user';
      const context = `${base()}/v1.0/$metadata#users('${found.user.id}')/mailboxSettings`;
      if (m[2]) return { status: 200, body: { '@odata.context': `${context}/userPurpose`, value: purpose } };
      return {
        status: 200,
        body: {
          '@odata.context': context,
          archiveFolder: null,
          timeZone: 'W. Europe Standard Time',
          dateFormat: 'dd/MM/yyyy',
          timeFormat: 'HH:mm',
          userPurpose: purpose,
          language: { locale: 'en-GB', displayName: 'English (United Kingdom)' },
        },
      };
    },
  };
}

/** Get, create and update the OWA.UserOptions configuration item. */
function userConfigurationRoutes({ tenant, base, onWrite }: MailboxDeps, mailboxItem: MailboxOf): Route[] {
  return [
    {
      method: 'GET',
      pattern: /^\/beta\/users\/([^/]+)\/mailFolders\/root\/userConfigurations\/([^/]+)$/,
      name: 'userConfiguration.get',
      handler: ({ req }, m) => {
        const found = mailboxItem(req.headers.authorization, m[1]!);
        if ('status' in found) return found;
        const entries = decodeURIComponent(m[2]!) === 'OWA.UserOptions' ? tenant.mailboxes.get(found.user.id) : undefined;
        if (!entries) return graphError(404, 'ErrorItemNotFound', 'The specified object was not found in the store.');
        return {
          status: 200,
          body: {
            '@odata.context': `${base()}/beta/$metadata#users('${found.user.id}')/mailFolders('root')/userConfigurations/$entity`,
            id: 'OWA.UserOptions',
            binaryData: null,
            xmlData: null,
            structuredData: annotate(entries),
          },
        };
      },
    },
    {
      method: 'POST',
      pattern: /^\/beta\/users\/([^/]+)\/mailFolders\/root\/userConfigurations$/,
      name: 'userConfiguration.create',
      handler: ({ req, body }, m) => {
        const found = mailboxItem(req.headers.authorization, m[1]!);
        if ('status' in found) return found;
        const item = JSON.parse(body || '{}') as { id?: string; structuredData?: unknown };
        if (item.id !== 'OWA.UserOptions') return graphError(400, 'ErrorInvalidRequest', 'Only OWA.UserOptions is emulated.');
        if (tenant.mailboxes.has(found.user.id)) return graphError(409, 'ErrorItemSave', 'The configuration object already exists.');
        tenant.mailboxes.set(found.user.id, cleanEntries(item.structuredData));
        onWrite(found.user);
        return { status: 201, body: { id: 'OWA.UserOptions', structuredData: annotate(tenant.mailboxes.get(found.user.id)!) } };
      },
    },
    {
      method: 'PATCH',
      pattern: /^\/beta\/users\/([^/]+)\/mailFolders\/root\/userConfigurations\/([^/]+)$/,
      name: 'userConfiguration.update',
      handler: ({ req, body }, m) => {
        const found = mailboxItem(req.headers.authorization, m[1]!);
        if ('status' in found) return found;
        if (decodeURIComponent(m[2]!) !== 'OWA.UserOptions' || !tenant.mailboxes.has(found.user.id))
          return graphError(404, 'ErrorItemNotFound', 'The specified object was not found in the store.');
        const patch = JSON.parse(body || '{}') as { structuredData?: unknown };
        tenant.mailboxes.set(found.user.id, cleanEntries(patch.structuredData));
        onWrite(found.user);
        return { status: 200, body: { id: 'OWA.UserOptions', structuredData: annotate(tenant.mailboxes.get(found.user.id)!) } };
      },
    },
  ];
}
