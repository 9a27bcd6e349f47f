/**
 * The body of GET /v1/content_schema (spec 2.13): `{version, schema, enums, social_icons, example,
 * guidance}`.
 *
 * - `schema` is zod 4's JSON Schema export of the very schema the validator uses, so the two cannot
 *   drift. It is built once per process.
 * - `example` is a complete tree built from the caller's own smart fields (picked by slug and kind),
 *   falling back to literal text where the workspace has no fitting field, so it always passes the
 *   validator for that workspace and can be posted as is.
 * - `enums` lists every closed set and bound the validator applies, plus the workspace's smart
 *   fields (the values `smartFieldUuid` accepts).
 */
import { z } from 'zod';
import { NAMED_COLORS } from './colors.ts';
import { SIGNATURE_SIZE_LIMITS } from './limits.ts';
import {
  BLOCK_TYPES,
  contentTreeSchema,
  DEFAULTS,
  DIRECTIONS,
  FONT_FAMILIES,
  FONT_STYLES,
  FONT_WEIGHTS,
  HREF_SCHEMES,
  LIMITS,
  STACK_CHILD_TYPES,
  TEXT_DECORATIONS,
  VERTICAL_ALIGNS,
  type ContentTree,
  type StackChild,
  type TextToken,
} from './schema.ts';
import { SOCIAL_ICONS, SOCIAL_NETWORKS } from './social.ts';

/** Bumped when the tree's accepted shape changes. */
export const CONTENT_SCHEMA_VERSION = '1.1';

export interface SmartFieldSummary {
  id: string;
  slug: string;
  label: string;
  kind: string;
}

let jsonSchema: Record<string, unknown> | undefined;

/** The JSON Schema of the content tree (draft 2020-12), generated once. */
export function contentTreeJsonSchema(): Record<string, unknown> {
  jsonSchema ??= z.toJSONSchema(contentTreeSchema) as Record<string, unknown>;
  return jsonSchema;
}

export const GUIDANCE = {
  procedure: [
    'Read an existing signature with GET /v1/signatures and copy its content.',
    'Change only what is needed, keeping the structure and the ids.',
    'Write it back as draft_content (PATCH /v1/signatures/{id}); publish to install it.',
  ],
  structure:
    'The root is a stack. A stack holds children (stack, text, list, socialList, optOut), one per row, or side by side with direction "horizontal". A list holds listItem blocks, a socialList holds socialListItem blocks.',
  smart_fields:
    "A textToken with smartFieldUuid shows each teammate's value of that smart field (enums.smart_fields). Fields of kind image render as an image as wide as the text block (blockStyle.width, default 80 px); their value is an https URL or an asset id, and the token value is the alt text.",
  empty_fields:
    'A text line or list item whose smart tokens are all empty for a teammate is left out entirely, label included. Literal tokens between two smart tokens (" | ", ", ") act as separators and are only shown between values that are shown. Gaps are only placed between blocks that are shown.',
  links:
    'href.text must start with https://, http://, mailto: or tel:. With href.smartFieldUuid, text is a prefix ("mailto:", "tel:", "https://x.com/") and the teammate\'s value follows it. queryParams are appended URL-encoded; a parameter whose value is empty is left out. A token whose link comes from an empty smart field is left out.',
  styles:
    'Sizes are px numbers within enums.limits. lineHeight is a multiple of fontSize. Colours are CSS colours (#rrggbb, rgb(), hsl(), lowercase names). Margins sit outside backgroundColor, paddings inside.',
  hidden: 'visible:false leaves a block out of the rendered signature but keeps it in the content.',
  opt_out:
    'An optOut block is a line linking to the workspace\'s opt-out link (GET /v1/workspace/privacy_settings opt_out_url), which the render fills in and never tracks: a recipient who confirms it is no longer tracked per person. text (default "Stop tracking me"), textStyle and blockStyle as for a text block; the link itself cannot be set.',
  campaigns:
    'An active marketing campaign targeting the signature appends its content as a banner below it, for teammates matching smart_fields_conditions (outer array: any group; inner array: every condition; equal: the value is one of values). Reply and internal variants show it only with show_marketing_campaigns.',
  size: 'Gmail accepts 10,000 characters of HTML, Outlook 30,000 through the add-in and 8,000 by default when pushed to Outlook on the web (the integration config max_html_length), Slack 10,000 (enums.size_limits), measured on what each mailbox receives, tracked links included; a larger signature fails with signature_too_long before any provider call, and GET /v1/signatures/{id}/compatibility names the mailboxes that would refuse it.',
  errors:
    'An invalid tree is refused with 422; each entry of details names the offending member (e.g. signature.draft_content.children[2].tokens[0].textStyle.fontSize), a code, a message, and the allowed values or missing members.',
} as const;

function pick(fields: readonly SmartFieldSummary[], slugs: readonly string[], kind?: string): SmartFieldSummary | undefined {
  for (const s of slugs) {
    const f = fields.find((x) => x.slug === s);
    if (f) return f;
  }
  return kind ? fields.find((x) => x.kind === kind) : undefined;
}

function token(id: string, field: SmartFieldSummary | undefined, fallback: string, extra: Partial<TextToken> = {}): TextToken {
  return field ? { id, type: 'textToken', smartFieldUuid: field.id, ...extra } : { id, type: 'textToken', value: fallback, ...extra };
}

/** The example's phone and email line, linked with tel: and mailto:. */
function contactList(phone: SmartFieldSummary | undefined, email: SmartFieldSummary | undefined): StackChild {
  return {
    type: 'list',
    id: 'contact',
    direction: 'horizontal',
    separator: ' | ',
    separatorStyle: { color: '#9aa5b1' },
    blockStyle: { marginTop: 6 },
    children: [
      {
        type: 'listItem',
        id: 'contact-phone',
        label: {
          type: 'listItemLabel',
          id: 'contact-phone-label',
          tokens: [{ id: 'contact-phone-label-text', type: 'textToken', value: 'T ', textStyle: { color: '#0b6bcb', fontWeight: 'bold' } }],
        },
        tokens: [
          token('contact-phone-value', phone, '+44 20 7946 0018', { href: phone ? { text: 'tel:', smartFieldUuid: phone.id } : { text: 'tel:+442079460018' } }),
        ],
      },
      {
        type: 'listItem',
        id: 'contact-email',
        label: {
          type: 'listItemLabel',
          id: 'contact-email-label',
          tokens: [{ id: 'contact-email-label-text', type: 'textToken', value: 'E ', textStyle: { color: '#0b6bcb', fontWeight: 'bold' } }],
        },
        tokens: [
          token('contact-email-value', email, 'ada@example.com', {
            href: email ? { text: 'mailto:', smartFieldUuid: email.id } : { text: 'mailto:ada@example.com' },
          }),
        ],
      },
    ],
  };
}

/** The example's website link, tagged with utm_source and, where the workspace has an email field, the sender's address. */
function websiteLine(email: SmartFieldSummary | undefined): StackChild {
  return {
    type: 'text',
    id: 'website',
    tokens: [
      {
        id: 'website-link',
        type: 'textToken',
        value: 'example.com',
        textStyle: { color: '#0b6bcb' },
        href: {
          text: 'https://example.com/',
          queryParams: [
            { id: 'utm-source', key: 'utm_source', values: [{ id: 'utm-source-value', text: 'email-signature' }] },
            ...(email ? [{ id: 'ref', key: 'ref', values: [{ id: 'ref-value', smartFieldUuid: email.id }] }] : []),
          ],
        },
      },
    ],
  };
}

/** The example's social icons: LinkedIn (the workspace's LinkedIn field where it has one) and X. */
function socialList(linkedin: SmartFieldSummary | undefined): StackChild {
  return {
    type: 'socialList',
    id: 'social',
    iconSize: 20,
    blockStyle: { marginTop: 6, gap: 6 },
    children: [
      {
        type: 'socialListItem',
        id: 'social-linkedin',
        network: 'linkedin',
        href: linkedin ? { smartFieldUuid: linkedin.id } : { text: 'https://www.linkedin.com/company/example' },
      },
      { type: 'socialListItem', id: 'social-x', network: 'x', href: { text: 'https://x.com/example' } },
    ],
  };
}

/** A complete, valid tree using the workspace's smart fields where it has fitting ones. */
export function buildExample(fields: readonly SmartFieldSummary[]): ContentTree {
  const name = pick(fields, ['full_name', 'name', 'display_name', 'first_name', 'given_name']);
  const title = pick(fields, ['job_title', 'title', 'position', 'role']);
  const phone = pick(fields, ['phone', 'work_phone', 'phone_number', 'mobile'], 'phone');
  const email = pick(fields, ['email', 'work_email'], 'email');
  const photo = pick(fields, ['photo', 'avatar', 'picture'], 'image');
  const linkedin = fields.find((f) => f.slug.includes('linkedin'));

  const details: StackChild[] = [
    { type: 'text', id: 'name', tokens: [token('name-value', name, 'Ada Lovelace', { textStyle: { fontSize: 16, fontWeight: 'bold', color: '#0b2545' } })] },
    { type: 'text', id: 'title', tokens: [token('title-value', title, 'Head of Engineering', { textStyle: { color: '#616e7c' } })] },
    contactList(phone, email),
    websiteLine(email),
    socialList(linkedin),
  ];
  const columns: StackChild[] = [];
  if (photo)
    columns.push({
      type: 'text',
      id: 'photo',
      blockStyle: { width: 72 },
      tokens: [{ id: 'photo-value', type: 'textToken', smartFieldUuid: photo.id, value: 'Photo' }],
    });
  columns.push({ type: 'stack', id: 'details', blockStyle: { gap: 2 }, children: details });
  return {
    type: 'stack',
    id: 'root',
    displayName: 'Signature',
    blockStyle: { paddingTop: 8, paddingBottom: 8 },
    children: [
      { type: 'stack', id: 'main', direction: 'horizontal', verticalAlign: 'top', blockStyle: { gap: 16 }, children: columns },
      { type: 'stack', id: 'divider', blockStyle: { marginTop: 10, marginBottom: 10, paddingTop: 1, backgroundColor: '#e4e7eb', width: 400 }, children: [] },
      {
        type: 'text',
        id: 'disclaimer',
        tokens: [
          {
            id: 'disclaimer-text',
            type: 'textToken',
            value: 'This email is confidential.',
            textStyle: { fontSize: 10, color: '#9aa5b1', fontStyle: 'italic' },
          },
        ],
      },
      {
        type: 'text',
        id: 'old-tagline',
        visible: false,
        displayName: 'Hidden blocks stay in the content',
        tokens: [{ id: 'old-tagline-text', type: 'textToken', value: 'Our previous tagline' }],
      },
    ],
  };
}

export function contentSchemaEnums(fields: readonly SmartFieldSummary[]) {
  return {
    block_types: BLOCK_TYPES,
    stack_child_types: STACK_CHILD_TYPES,
    list_child_types: ['listItem'],
    social_list_child_types: ['socialListItem'],
    token_types: ['textToken'],
    directions: DIRECTIONS,
    vertical_aligns: VERTICAL_ALIGNS,
    font_families: FONT_FAMILIES,
    font_weights: FONT_WEIGHTS,
    font_styles: FONT_STYLES,
    text_decorations: TEXT_DECORATIONS,
    href_schemes: HREF_SCHEMES,
    social_networks: SOCIAL_NETWORKS,
    named_colors: NAMED_COLORS,
    condition_operators: ['equal'],
    smart_field_kinds: ['text', 'email', 'phone', 'url', 'image'],
    smart_fields: fields.map((f) => ({ id: f.id, slug: f.slug, label: f.label, kind: f.kind })),
    defaults: DEFAULTS,
    limits: LIMITS,
    size_limits: SIGNATURE_SIZE_LIMITS,
  };
}

export function contentSchemaDocument(fields: readonly SmartFieldSummary[]) {
  return {
    version: CONTENT_SCHEMA_VERSION,
    schema: contentTreeJsonSchema(),
    enums: contentSchemaEnums(fields),
    social_icons: SOCIAL_ICONS,
    example: buildExample(fields),
    guidance: GUIDANCE,
  };
}
