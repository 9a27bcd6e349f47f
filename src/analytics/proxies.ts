/**
 * Image proxies and privacy preloading: fetches of a tracked image that a mail service makes on the
 * reader's behalf, told apart by their user agent.
 *
 * - `gmail_image_proxy`: Gmail serves every image of a message through Google's image proxy, which
 *   fetches it with a user agent naming `GoogleImageProxy` (`via ggpht.com`) from Google's addresses,
 *   when a message is opened or, lately, at delivery, then serves it from its cache: later opens of
 *   the same image are not seen at all.
 * - `apple_mail_privacy`: Apple Mail Privacy Protection downloads every remote image of a message
 *   when it reaches the device, whether or not it is read, through Apple's relays (the iCloud
 *   Private Relay infrastructure), with the bare user agent `Mozilla/5.0`. It inflates views: every
 *   message to an Apple Mail reader with the protection on looks "viewed". Apple's relay address
 *   ranges are not shipped with the service; the user agent is the signal used.
 * - `yahoo_mail_proxy`: Yahoo Mail's image proxy and cache (`YahooMailProxy` in the user agent).
 *
 * Outlook.com and Microsoft 365 also fetch images through Microsoft's servers, but with no user agent
 * that is documented or stable enough to name: those fetches count as direct.
 *
 * The same user agents never follow links, so a click carrying one is a bot's (`image_proxy`, bots.ts).
 */

export type ProxyName = 'gmail_image_proxy' | 'apple_mail_privacy' | 'yahoo_mail_proxy';

/** The image proxy a user agent belongs to, or null. */
export function proxyOf(userAgent: string | undefined): ProxyName | null {
  if (!userAgent) return null;
  if (userAgent.trim() === 'Mozilla/5.0') return 'apple_mail_privacy';
  if (/GoogleImageProxy|ggpht\.com/i.test(userAgent)) return 'gmail_image_proxy';
  if (/YahooMailProxy/i.test(userAgent)) return 'yahoo_mail_proxy';
  return null;
}
