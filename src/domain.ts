/**
 * Value types of the domain that every layer speaks of (see the glossary in README "Code map").
 */

/** Which signature of a mailbox: the primary one, or the reply or internal variant. */
export type SignatureKind = 'primary' | 'reply' | 'internal';

export const SIGNATURE_KINDS: readonly SignatureKind[] = ['primary', 'reply', 'internal'];

/** The state of one (address, signature, kind) pair in one mailbox provider. */
export type InstallStatus = 'installed' | 'pending' | 'not_activated' | 'not_installed' | 'failed' | 'not_supported' | 'access_lost';

export const INSTALL_STATUSES: readonly InstallStatus[] = ['installed', 'pending', 'not_activated', 'not_installed', 'failed', 'not_supported', 'access_lost'];

/** What an integration provides: directory people, signatures, smart-field values or assets (photos). */
export type IntegrationCategory = 'teammates' | 'signatures' | 'smart_fields' | 'assets';

export const INTEGRATION_CATEGORIES: readonly IntegrationCategory[] = ['teammates', 'signatures', 'smart_fields', 'assets'];

/** The categories whose integrations are directories (they list people). */
export const DIRECTORY_CATEGORIES: readonly IntegrationCategory[] = ['teammates', 'smart_fields'];

export type IntegrationStatus = 'active' | 'access_lost' | 'disconnected';

/** UTM parameters of a campaign (`marketing_campaign.utm`), added to its banner's web links (src/render/utm.ts). */
export const UTM_KEYS = ['source', 'medium', 'campaign', 'term', 'content'] as const;
export type UtmKey = (typeof UTM_KEYS)[number];
export type Utm = Partial<Record<UtmKey, string>>;

/** A teammate's smart-field values by smart field id, as a render or a campaign condition reads them. */
export type SmartFieldValues = ReadonlyMap<string, string | null | undefined> | Readonly<Record<string, string | null | undefined>>;
