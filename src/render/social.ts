/**
 * Social networks a `socialListItem` may name, and the icon each one renders with.
 *
 * Icons are 64×64 PNG files (PNG, not SVG: Gmail and Outlook do not display SVG) served from one
 * fixed https host under a versioned path. The path is versioned so that a redesign ships as `v2`
 * and never changes the bytes, and so the hash, of signatures already installed. The same map is
 * published by GET /v1/content_schema (`social_icons`) and used by the renderer, so what an editor
 * shows and what a mailbox receives cannot differ.
 */

export const SOCIAL_NETWORKS = [
  'linkedin',
  'x',
  'facebook',
  'instagram',
  'youtube',
  'tiktok',
  'github',
  'gitlab',
  'mastodon',
  'bluesky',
  'threads',
  'pinterest',
  'medium',
  'dribbble',
  'behance',
  'whatsapp',
  'telegram',
  'calendly',
  'website',
  'email',
  'phone',
] as const;

export type SocialNetwork = (typeof SOCIAL_NETWORKS)[number];

/** Where the icon files live; `<base><network>.png`. */
export const SOCIAL_ICON_BASE_URL = 'https://static.sigsync.app/social-icons/v1/';

/** Human names, used as the icons' alt text and in the plain-text alternative. */
export const SOCIAL_NETWORK_NAMES: Readonly<Record<SocialNetwork, string>> = {
  linkedin: 'LinkedIn',
  x: 'X',
  facebook: 'Facebook',
  instagram: 'Instagram',
  youtube: 'YouTube',
  tiktok: 'TikTok',
  github: 'GitHub',
  gitlab: 'GitLab',
  mastodon: 'Mastodon',
  bluesky: 'Bluesky',
  threads: 'Threads',
  pinterest: 'Pinterest',
  medium: 'Medium',
  dribbble: 'Dribbble',
  behance: 'Behance',
  whatsapp: 'WhatsApp',
  telegram: 'Telegram',
  calendly: 'Calendly',
  website: 'Website',
  email: 'Email',
  phone: 'Phone',
};

/** network → https icon URL. Frozen: the renderer and content_schema share this object. */
export const SOCIAL_ICONS: Readonly<Record<SocialNetwork, string>> = Object.freeze(
  Object.fromEntries(SOCIAL_NETWORKS.map((n) => [n, `${SOCIAL_ICON_BASE_URL}${n}.png`])) as Record<SocialNetwork, string>,
);
