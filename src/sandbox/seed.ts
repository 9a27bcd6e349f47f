/**
 * The sandbox workspace "Acme" (fixtures/sandbox/acme.json; its emulated tenants, about 25 people
 * part on Google Workspace, part on Microsoft 365, all of them in Slack, and a shared mailbox on
 * Microsoft 365, support@eu.acme.test, which Entra lists as a disabled account whose mailbox purpose
 * is `shared`, are emulators/acme.ts):
 * the workspace and an API key, the five integrations pointed at the emulators, smart fields mapped
 * to directory attributes, a signature draft and a live campaign whose banner the signature shows.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { createCampaign } from '../campaigns/campaigns.ts';
import type { AppContext } from '../context.ts';
import { createApiKey } from '../db/apiKeys.ts';
import { withTx } from '../db/tx.ts';
import { createWorkspace, setEventTracking } from '../db/workspaces.ts';
import { createSignature, lockSignature, publishVariant, VARIANT_KINDS } from '../signatures/signatures.ts';
import { createSmartField } from '../db/smartFields.ts';
import { insertIntegration, repointIntegrations, type IntegrationRow } from '../integrations/integrations.ts';
import { groupIdsNamed } from '../teammates/groups.ts';
import { validateContent } from '../render/index.ts';
import { addSandboxLogo } from './logo.ts';
import { sandboxVariantTrees } from './signatureVariants.ts';
import type { SandboxTenants } from './tenants.ts';

export interface AcmeFixture {
  workspace: string;
  company: string;
  website: string;
  /** The directory's people (emulators/acme.ts reads the rest of each: names, title, phone). */
  people: { email: string; provider: 'google' | 'microsoft' }[];
  /** The Microsoft tenant's shared mailboxes (emulators/acme.ts reads the rest). */
  shared_mailboxes: { email: string }[];
  campaign: { name: string; text: string; link_text: string; href: string };
}

const FIXTURE = path.resolve(import.meta.dirname, '../../fixtures/sandbox/acme.json');

export function loadAcme(): AcmeFixture {
  return JSON.parse(fs.readFileSync(FIXTURE, 'utf8')) as AcmeFixture;
}

let serviceKey: string | undefined;
/** A service-account key for the emulated Google tenant (which does not check the JWT's signature). */
function sandboxServiceAccount() {
  serviceKey ??= crypto.generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  return {
    type: 'service_account',
    client_email: 'sigsync@acme-sandbox.iam.gserviceaccount.com',
    private_key: serviceKey,
    private_key_id: 'sandbox',
    subject: 'admin@acme.test',
  };
}

export type SandboxIntegrationKey = 'googleDirectory' | 'gmail' | 'microsoftDirectory' | 'outlook' | 'slack';

type Emulated = Pick<SandboxTenants, 'connections'>;

/** Config (emulator URLs, the Microsoft CA) and credentials of each sandbox integration. */
export function sandboxConnections(e: Emulated) {
  const c = e.connections;
  const google = { kind: 'google_workspace' as const, credentials: sandboxServiceAccount(), config: c.google.config };
  const microsoft = { kind: 'microsoft_entra' as const, credentials: c.microsoft.credentials, config: c.microsoft.config };
  const slack = { kind: 'slack' as const, credentials: c.slack.credentials, config: c.slack.config };
  return {
    googleDirectory: { ...google, category: 'teammates' as const, name: 'Google Workspace (sandbox)' },
    gmail: { ...google, category: 'signatures' as const, name: 'Gmail (sandbox)' },
    microsoftDirectory: { ...microsoft, category: 'teammates' as const, name: 'Microsoft Entra ID (sandbox)' },
    // Outlook as a default tenant (roaming signatures on) gets it: the add-in mode, named here so that
    // repointing keeps it. Nothing is written to the mailboxes; each installation is `pending` until the
    // add-in fetches at compose time (the compose-window demo page, /sandbox/outlook), then `installed`.
    outlook: { ...microsoft, config: { ...microsoft.config, mode: 'addin' }, category: 'signatures' as const, name: 'Outlook (sandbox)' },
    slack: { ...slack, category: 'signatures' as const, name: 'Slack (sandbox)' },
  } satisfies Record<SandboxIntegrationKey, unknown>;
}

/** Connects the five integrations of a workspace to the emulators. */
export async function connectSandbox(ctx: AppContext, workspaceId: string, e: Emulated): Promise<Record<SandboxIntegrationKey, IntegrationRow>> {
  const conns = sandboxConnections(e);
  const out = {} as Record<SandboxIntegrationKey, IntegrationRow>;
  for (const key of Object.keys(conns) as SandboxIntegrationKey[]) {
    out[key] = await withTx(ctx.pool, (c) => insertIntegration(ctx, c, { workspaceId, ...conns[key] }));
  }
  return out;
}

/**
 * Points existing sandbox integrations at freshly started emulators (new ports, new certificate):
 * config and credentials are rewritten, and incremental state from the previous emulators is dropped.
 */
export async function repointSandbox(ctx: AppContext, workspaceId: string, e: Emulated): Promise<void> {
  const conns = sandboxConnections(e);
  for (const conn of Object.values(conns)) await repointIntegrations(ctx, ctx.pool, workspaceId, conn);
}

export interface SmartFieldSpec {
  slug: string;
  label: string;
  kind: 'text' | 'phone';
  integration: SandboxIntegrationKey;
  attribute: string;
}

/** One smart field per attribute and directory (a smart field takes its values from one integration). */
export const SANDBOX_SMART_FIELDS: readonly SmartFieldSpec[] = [
  { slug: 'full_name', label: 'Full name', kind: 'text', integration: 'googleDirectory', attribute: 'name.fullName' },
  { slug: 'job_title', label: 'Job title', kind: 'text', integration: 'googleDirectory', attribute: 'organizations.primary.title' },
  { slug: 'phone', label: 'Phone', kind: 'phone', integration: 'googleDirectory', attribute: 'phones.work' },
  { slug: 'full_name_m365', label: 'Full name (Microsoft 365)', kind: 'text', integration: 'microsoftDirectory', attribute: 'displayName' },
  { slug: 'job_title_m365', label: 'Job title (Microsoft 365)', kind: 'text', integration: 'microsoftDirectory', attribute: 'jobTitle' },
  { slug: 'phone_m365', label: 'Phone (Microsoft 365)', kind: 'phone', integration: 'microsoftDirectory', attribute: 'phones.work' },
];

export async function mapSandboxSmartFields(
  ctx: AppContext,
  workspaceId: string,
  integrations: Record<SandboxIntegrationKey, IntegrationRow>,
): Promise<Record<string, string>> {
  const ids: Record<string, string> = {};
  for (const [position, f] of SANDBOX_SMART_FIELDS.entries()) {
    ids[f.slug] = await createSmartField(ctx.pool, workspaceId, {
      label: f.label,
      slug: f.slug,
      kind: f.kind,
      position,
      integrationId: integrations[f.integration].id,
      integrationAttribute: f.attribute,
    });
  }
  return ids;
}

const NAVY = '#0b2545';
const STEEL = '#8da9c4';
const GREY = '#5c677d';

/** A thin coloured rule: a block whose background shows through one tiny line of text. */
function rule(id: string, style: Record<string, unknown>) {
  return {
    type: 'stack',
    id,
    blockStyle: { backgroundColor: STEEL, ...style },
    children: [
      { type: 'text', id: `${id}-line`, tokens: [{ type: 'textToken', id: `${id}-t`, value: '\u00a0', textStyle: { fontSize: 6, lineHeight: 0.5 } }] },
    ],
  };
}

/** A literal text token (the logo's letter, the company, the contact line's fixed parts). */
const literal = (id: string, value: string, textStyle?: Record<string, unknown>, href?: string) => ({
  type: 'textToken',
  id,
  value,
  ...(textStyle ? { textStyle } : {}),
  ...(href ? { href: { text: href } } : {}),
});

/** The demo signature's logo mark: the company's initial on its colour. */
function logoBlock(company: string) {
  return {
    type: 'stack',
    id: 'logo',
    blockStyle: { backgroundColor: NAVY, paddingTop: 14, paddingBottom: 14, paddingLeft: 18, paddingRight: 18 },
    children: [
      {
        type: 'text',
        id: 'logo-mark',
        tokens: [
          literal('logo-a', company.slice(0, 1).toUpperCase(), {
            fontSize: 28,
            fontWeight: 'bold',
            color: '#ffffff',
            fontFamily: 'georgia',
            lineHeight: 1,
          }),
        ],
      },
    ],
  };
}

/** The demo signature's row of social icons. */
function socialBlock(website: string) {
  return {
    type: 'socialList',
    id: 'social',
    iconSize: 20,
    blockStyle: { marginTop: 8, gap: 6 },
    children: [
      { type: 'socialListItem', id: 's-linkedin', network: 'linkedin', href: { text: 'https://www.linkedin.com/company/acme' } },
      { type: 'socialListItem', id: 's-x', network: 'x', href: { text: 'https://x.com/acme' } },
      { type: 'socialListItem', id: 's-youtube', network: 'youtube', href: { text: 'https://www.youtube.com/@acme' } },
      { type: 'socialListItem', id: 's-web', network: 'website', href: { text: website } },
    ],
  };
}

/**
 * The demo signature, as a company's would look with what the renderer has: a logo mark (the
 * company's initial on its colour; a text mark until the sandbox seeds an uploaded logo), a vertical
 * divider, name, title and company; a rule; a contact line with the phone as a `tel:` link, the
 * company's email address (`mailto:`) and website; and a row of social icons. Name, title and phone
 * come from whichever directory lists the teammate (both fields are in the tree; one is empty).
 */
export function sandboxSignatureTree(fields: Record<string, string>, company = 'Acme Inc.', website = 'https://acme.test') {
  const token = (id: string, slug: string, textStyle?: Record<string, unknown>, href?: Record<string, unknown>) => ({
    type: 'textToken',
    id,
    smartFieldUuid: fields[slug]!,
    ...(textStyle ? { textStyle } : {}),
    ...(href ? { href } : {}),
  });
  const name = { fontWeight: 'bold', fontSize: 16, color: NAVY };
  const small = { fontSize: 13, color: GREY };
  const link = { fontSize: 13, color: NAVY };
  const host = website.replace(/^https?:\/\//, '').replace(/\/$/, '');
  return {
    type: 'stack',
    id: 'root',
    children: [
      {
        type: 'stack',
        id: 'card',
        direction: 'horizontal',
        verticalAlign: 'middle',
        blockStyle: { gap: 14 },
        children: [
          logoBlock(company),
          rule('divider', { width: 2 }),
          {
            type: 'stack',
            id: 'who',
            children: [
              { type: 'text', id: 'name', tokens: [token('t-name', 'full_name', name), token('t-name-m', 'full_name_m365', name)] },
              { type: 'text', id: 'title', tokens: [token('t-title', 'job_title', small), token('t-title-m', 'job_title_m365', small)] },
              { type: 'text', id: 'company', tokens: [literal('t-company', company, { fontSize: 13, fontWeight: 'bold', color: NAVY })] },
            ],
          },
        ],
      },
      rule('rule', { width: 420, marginTop: 10, marginBottom: 8 }),
      {
        type: 'list',
        id: 'contact',
        direction: 'horizontal',
        separator: ' | ',
        separatorStyle: { color: STEEL, fontSize: 13 },
        children: [
          {
            type: 'listItem',
            id: 'phone',
            tokens: [
              token('t-phone', 'phone', link, { smartFieldUuid: fields.phone }),
              token('t-phone-m', 'phone_m365', link, { smartFieldUuid: fields.phone_m365 }),
            ],
          },
          { type: 'listItem', id: 'email', tokens: [literal('t-email', `hello@${host}`, link, `mailto:hello@${host}`)] },
          { type: 'listItem', id: 'website', tokens: [literal('t-web', host, link, website)] },
        ],
      },
      socialBlock(website),
    ],
  };
}

export function sandboxBannerTree(c: AcmeFixture['campaign']) {
  return {
    type: 'stack',
    id: 'banner',
    blockStyle: { paddingTop: 8, paddingRight: 12, paddingBottom: 8, paddingLeft: 12, backgroundColor: '#0b2545', width: 420 },
    children: [
      {
        type: 'text',
        id: 'banner-line',
        tokens: [
          { type: 'textToken', id: 'b1', value: c.text, textStyle: { color: '#ffffff', fontWeight: 'bold' } },
          { type: 'textToken', id: 'b2', value: c.link_text, textStyle: { color: '#8fd3ff', textDecoration: 'underline' }, href: { text: c.href } },
        ],
      },
    ],
  };
}

/** The demo signature (a draft) with its reply and internal variants, activated and published (signatureVariants.ts). */
export async function createSandboxSignature(ctx: AppContext, workspaceId: string, fields: Record<string, string>, name = 'Acme standard'): Promise<string> {
  const tree = sandboxSignatureTree(fields);
  const variants = sandboxVariantTrees(fields);
  for (const [field, t] of [
    ['signature.draft_content', tree],
    ['signature.variants.reply', variants.reply],
    ['signature.variants.internal', variants.internal],
  ] as const) {
    const valid = validateContent(t, { field, smartFieldIds: new Set(Object.values(fields)) });
    if (!valid.ok) throw new Error(`the sandbox signature is not valid content: ${JSON.stringify(valid)}`);
  }
  return withTx(ctx.pool, async (c) => {
    const id = await createSignature(
      c,
      workspaceId,
      { name, draft: tree },
      VARIANT_KINDS.map((kind) => ({ kind, draft: variants[kind], activated: true })),
    );
    await lockSignature(c, workspaceId, id);
    for (const kind of VARIANT_KINDS) await publishVariant(c, workspaceId, id, kind);
    return id;
  });
}

/** A campaign on the signature, in draft; `live` makes it active now for 30 days. */
export async function createSandboxCampaign(
  ctx: AppContext,
  workspaceId: string,
  signatureId: string,
  opts: { live?: boolean; fixture?: AcmeFixture } = {},
): Promise<string> {
  const c = (opts.fixture ?? loadAcme()).campaign;
  const live = opts.live ?? false;
  const row = await createCampaign(ctx.pool, workspaceId, {
    name: c.name,
    status: live ? 'active' : 'draft',
    content: sandboxBannerTree(c),
    signatureIds: [signatureId],
    startTime: live ? new Date(Date.now() - 60_000) : null,
    endTime: live ? new Date(Date.now() + 30 * 86_400_000) : null,
    utm: { source: 'email-signature', medium: 'email', campaign: 'acme-summit' },
  });
  return row.id;
}

export interface SeededSandbox {
  workspaceId: string;
  apiKey: string;
  integrations: Record<SandboxIntegrationKey, IntegrationRow>;
  smartFields: Record<string, string>;
  signatureId: string;
  campaignId: string;
}

/** Seeds the whole Acme workspace against running emulators. Assignments need the synced groups: see `assignEveryone`. */
export async function seedSandbox(ctx: AppContext, e: Emulated, fixture: AcmeFixture = loadAcme()): Promise<SeededSandbox> {
  const ws = await createWorkspace(ctx.pool, fixture.workspace);
  // The sandbox shows the whole loop: installed signatures carry tracked links from the first install.
  await setEventTracking(ctx.pool, ws.id, true);
  const { key } = await createApiKey(ctx.pool, ws.id, 'sandbox');
  const integrations = await connectSandbox(ctx, ws.id, e);
  const smartFields = await mapSandboxSmartFields(ctx, ws.id, integrations);
  const signatureId = await createSandboxSignature(ctx, ws.id, smartFields);
  await addSandboxLogo(ctx, ws.id, signatureId);
  const campaignId = await createSandboxCampaign(ctx, ws.id, signatureId, { live: true, fixture });
  return { workspaceId: ws.id, apiKey: key, integrations, smartFields, signatureId, campaignId };
}

/** The synced all-staff groups of the two directories, as assignment targets. */
export async function everyoneGroups(ctx: AppContext, workspaceId: string): Promise<string[]> {
  return groupIdsNamed(ctx.pool, workspaceId, ['Everyone', 'All staff EMEA']);
}
