/**
 * Value types of the domain that every layer speaks of (see the glossary in README "Code map").
 */

/** Which signature of a mailbox: the primary one, or the reply or internal variant. */
export type SignatureKind = 'primary' | 'reply' | 'internal';

export const SIGNATURE_KINDS: readonly SignatureKind[] = ['primary', 'reply', 'internal'];

/** The state of one (address, signature, kind) pair in one mailbox provider. */
export type InstallStatus = 'installed' | 'pending' | 'not_activated' | 'not_installed' | 'failed' | 'not_supported' | 'access_lost';
