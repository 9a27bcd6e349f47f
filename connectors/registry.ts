/**
 * Every connector, imported explicitly: provider kind -> definition, per category.
 * Adding a provider means adding its folder, its fixtures, and one line per category here; what
 * the engine must know about it (delivery, add-in mode, photo versions) is declared in the
 * definition's `capabilities`, never by its kind name in src/.
 */
import type { z } from 'zod';
import type { ConnectorCapabilities, ConnectorDefinition, DirectorySource, MailboxInstaller, PhotoSource } from './types.ts';
import { googleDirectorySource } from './google/directory.ts';
import { gmailInstaller } from './google/gmail.ts';
import { googlePhotoSource } from './google/photos.ts';
import { microsoftDirectorySource } from './microsoft/directory.ts';
import { outlookInstaller } from './microsoft/outlook.ts';
import { microsoftPhotoSource } from './microsoft/photos.ts';
import { slackDelivery } from './slack/delivery.ts';
import { slackDirectorySource } from './slack/directory.ts';
import { slackPhotoSource } from './slack/photos.ts';
import type { ConnectorKind } from './kinds.ts';

type Def<T> = ConnectorDefinition<z.ZodType, z.ZodType, T>;
export type { ConnectorKind };

export const directorySources: Partial<Record<ConnectorKind, Def<DirectorySource>>> = {
  google_workspace: googleDirectorySource,
  microsoft_entra: microsoftDirectorySource,
  slack: slackDirectorySource,
};

export const mailboxInstallers: Partial<Record<ConnectorKind, Def<MailboxInstaller>>> = {
  google_workspace: gmailInstaller,
  microsoft_entra: outlookInstaller,
  slack: slackDelivery,
};

export const photoSources: Partial<Record<ConnectorKind, Def<PhotoSource>>> = {
  google_workspace: googlePhotoSource,
  microsoft_entra: microsoftPhotoSource,
  slack: slackPhotoSource,
};

const registries = { signatures: mailboxInstallers, assets: photoSources, teammates: directorySources, smart_fields: directorySources } as const;

/** The capabilities a connector declares (ConnectorCapabilities), or none for an unknown kind. */
export function capabilitiesOf(kind: string, category: keyof typeof registries): ConnectorCapabilities {
  return (registries[category] as Partial<Record<string, { capabilities?: ConnectorCapabilities }>>)[kind]?.capabilities ?? {};
}

/** The kinds of one category whose capabilities satisfy `test`. */
export function kindsWhere(category: keyof typeof registries, test: (c: ConnectorCapabilities) => boolean): ConnectorKind[] {
  return (Object.keys(registries[category]) as ConnectorKind[]).filter((k) => test(capabilitiesOf(k, category)));
}
