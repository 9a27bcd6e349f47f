/**
 * The demo signature's reply and internal variants: what only the Outlook add-in can choose between
 * at compose time (the sandbox's Outlook integration is in add-in mode, so they are `pending` until the
 * add-in fetches them; Gmail's sendAs and Slack hold one signature, so their installs of the variants
 * are `not_supported`). Reply (replies and forwards): one compact line with the phone.
 * Internal (every recipient inside the workspace): the name and the title, nothing else. Neither
 * shows the campaign banner. Name, title and phone come from whichever directory lists the
 * teammate (both fields are in the tree; one is empty), as in the primary signature (seed.ts).
 */
const NAVY = '#0b2545';
const GREY = '#5c677d';

export function sandboxVariantTrees(fields: Record<string, string>, company = 'Acme Inc.') {
  const field = (id: string, slug: string, textStyle: Record<string, unknown>) => ({ type: 'textToken', id, smartFieldUuid: fields[slug]!, textStyle });
  const literal = (id: string, value: string, textStyle: Record<string, unknown>) => ({ type: 'textToken', id, value, textStyle });
  const name = { fontWeight: 'bold', fontSize: 14, color: NAVY };
  const small = { fontSize: 13, color: GREY };
  const reply = {
    type: 'stack',
    id: 'reply-root',
    children: [
      {
        type: 'list',
        id: 'reply-line',
        direction: 'horizontal',
        separator: ' · ',
        separatorStyle: small,
        children: [
          { type: 'listItem', id: 'r-name', tokens: [field('r-name-g', 'full_name', name), field('r-name-m', 'full_name_m365', name)] },
          { type: 'listItem', id: 'r-company', tokens: [literal('r-company-t', company, small)] },
          { type: 'listItem', id: 'r-phone', tokens: [field('r-phone-g', 'phone', small), field('r-phone-m', 'phone_m365', small)] },
        ],
      },
    ],
  };
  const internal = {
    type: 'stack',
    id: 'internal-root',
    children: [
      {
        type: 'text',
        id: 'internal-name',
        tokens: [literal('i-dash', '— ', small), field('i-name', 'full_name', name), field('i-name-m', 'full_name_m365', name)],
      },
      { type: 'text', id: 'internal-title', tokens: [field('i-title', 'job_title', small), field('i-title-m', 'job_title_m365', small)] },
    ],
  };
  return { reply, internal };
}
