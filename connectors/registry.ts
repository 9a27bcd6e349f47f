/**
 * Every connector, imported explicitly: provider kind -> definition, per category.
 * Adding a provider means adding its folder, its fixtures, and one line per category here.
 */
import type { z } from 'zod';
import type { ConnectorDefinition, DirectorySource, MailboxInstaller, PhotoSource } from './types.ts';
import { googleDirectorySource } from './google/directory.ts';
import { gmailInstaller } from './google/gmail.ts';
import { googlePhotoSource } from './google/photos.ts';
import { microsoftDirectorySource } from './microsoft/directory.ts';
import { outlookInstaller } from './microsoft/outlook.ts';
import { microsoftPhotoSource } from './microsoft/photos.ts';
import { slackDelivery } from './slack/delivery.ts';
import { slackDirectorySource } from './slack/directory.ts';
import { slackPhotoSource } from './slack/photos.ts';

type Def<T> = ConnectorDefinition<z.ZodType, z.ZodType, T>;
export type ConnectorKind = 'google_workspace' | 'microsoft_entra' | 'slack';

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
