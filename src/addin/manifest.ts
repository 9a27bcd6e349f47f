/**
 * The Outlook add-in's add-in-only XML manifest (the format every Outlook client takes: the web, the
 * new Outlook, classic Outlook for Windows, Mac, iOS and Android), built from the deployment's
 * settings. One manifest per deployment: every tenant deploys the same id, and the service finds the
 * workspace from each request's token.
 *
 * Event-based activation: OnNewMessageCompose, OnMessageRecipientsChanged and OnMessageFromChanged,
 * on desktop (shared folders and shared mailboxes included) and mobile, under the Mailbox set mobile
 * accepts (OVERRIDES_MIN_MAILBOX). The version follows the content (manifestVersion). Meetings get no signature (OnNewAppointmentOrganizer is not registered):
 * invitations are not where a marketing signature belongs. Classic Outlook for Windows runs the
 * handlers in its JavaScript-only runtime: the `Override type="javascript"` points it at
 * launchevent.js; the other clients load commands.html.
 *
 * Reference: https://learn.microsoft.com/office/dev/add-ins/develop/event-based-activation
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from '../config.ts';

export const ADDIN_DIR = import.meta.dirname;

/** Each event and its handler's name in launchevent.js (Office.actions.associate). */
export const LAUNCH_EVENTS = [
  { type: 'OnNewMessageCompose', functionName: 'onNewMessageComposeHandler' },
  { type: 'OnMessageRecipientsChanged', functionName: 'onMessageRecipientsChangedHandler' },
  { type: 'OnMessageFromChanged', functionName: 'onMessageFromChangedHandler' },
] as const;

/** The icons the manifest names, served at /addin/icon-<size>.png. */
export const ICON_SIZES = [16, 32, 64, 80, 128] as const;

export type ManifestSettings = Pick<Config, 'PUBLIC_BASE_URL' | 'ADDIN_ID' | 'ADDIN_ENTRA_CLIENT_ID' | 'ADDIN_ENTRA_AUDIENCE'>;

/** The manifest id: ADDIN_ID, else a GUID derived from PUBLIC_BASE_URL (stable across restarts). */
export function addinId(config: Pick<Config, 'PUBLIC_BASE_URL' | 'ADDIN_ID'>): string {
  if (config.ADDIN_ID) return config.ADDIN_ID.toLowerCase();
  const h = crypto.createHash('sha256').update(`sigsync-outlook-addin:${config.PUBLIC_BASE_URL}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-${((parseInt(h.slice(16, 18), 16) & 0x3f) | 0x80).toString(16)}${h.slice(18, 20)}-${h.slice(20, 32)}`;
}

/** The audience the add-in's Entra tokens carry. */
export function entraAudience(config: Pick<Config, 'PUBLIC_BASE_URL' | 'ADDIN_ENTRA_CLIENT_ID' | 'ADDIN_ENTRA_AUDIENCE'>): string | undefined {
  if (!config.ADDIN_ENTRA_CLIENT_ID) return undefined;
  return config.ADDIN_ENTRA_AUDIENCE ?? `api://${new URL(config.PUBLIC_BASE_URL).host}/${config.ADDIN_ENTRA_CLIENT_ID}`;
}

/** Stands for the version while the manifest's content is hashed. */
const VERSION_SLOT = '{{manifest-version}}';

/**
 * The manifest version, from its content: the service's release (major.minor.patch of package.json)
 * and, fourth, a number from 0 to 65535 taken from the hash of everything else in the manifest. Any
 * change of content (a setting, a URL, an event) changes the version, the same content keeps it, and
 * a new release raises it. Outlook and the admin center see a new version as an update (docs/outlook-addin.md).
 */
export function manifestVersion(content: string): string {
  const pkg = JSON.parse(fs.readFileSync(path.resolve(ADDIN_DIR, '../../package.json'), 'utf8')) as { version: string };
  const parts = pkg.version
    .split(/[.-]/)
    .filter((p) => /^\d+$/.test(p))
    .slice(0, 3);
  while (parts.length < 3) parts.push('0');
  const digest = crypto.createHash('sha256').update(content.replace(VERSION_SLOT, '')).digest();
  return [...parts, String(digest.readUInt16BE(0))].join('.');
}

const attr = (s: string) => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** An add-in key for key-only mode: the format `sigsync apikey create --addin` prints. */
export const ADDIN_KEY_PATTERN = /^[A-Za-z0-9_-]{16,128}$/;

/**
 * Why a manifest built from these settings could never fetch a signature (no Entra app for single
 * sign-on and no add-in key), in plain words; undefined when it can. `sigsync addin manifest` and
 * GET /addin/manifest.xml refuse such a manifest rather than hand it out.
 */
export function cannotSignIn(config: Pick<Config, 'ADDIN_ENTRA_CLIENT_ID'>, key: string | undefined): string | undefined {
  if (config.ADDIN_ENTRA_CLIENT_ID || key) return undefined;
  return (
    'the add-in would have no way to sign in, so it could never fetch a signature: set ADDIN_ENTRA_CLIENT_ID to the Entra app registered for it ' +
    '(docs/outlook-addin.md "Register the Entra app"), or use an add-in key (sigsync apikey create --workspace W --addin) with ' +
    '`sigsync addin manifest --key KEY` or /addin/manifest.xml?key=KEY'
  );
}

export interface BuiltManifest {
  xml: string;
  /** Things an admin should fix before deploying (an http base URL). */
  warnings: string[];
}

/** The manifest; `key` (key-only mode) is carried in the runtime URLs. */
export function buildManifest(config: ManifestSettings, opts: { key?: string } = {}): BuiltManifest {
  const base = config.PUBLIC_BASE_URL.replace(/\/+$/, '');
  const warnings: string[] = [];
  if (!base.startsWith('https://'))
    warnings.push(`PUBLIC_BASE_URL is ${base}: Outlook loads add-ins only over https; set PUBLIC_BASE_URL to the service's https address`);
  if (opts.key !== undefined && !ADDIN_KEY_PATTERN.test(opts.key))
    throw new Error('the add-in key is not in the format `sigsync apikey create --addin` prints');
  const q = opts.key ? `?key=${encodeURIComponent(opts.key)}` : '';
  const url = (p: string) => attr(`${base}/addin/${p}`);
  const audience = entraAudience(config);
  const origin = new URL(base).origin;
  const webApp = audience
    ? `
      <WebApplicationInfo>
        <Id>${attr(config.ADDIN_ENTRA_CLIENT_ID!)}</Id>
        <Resource>${attr(audience)}</Resource>
        <Scopes>
          <Scope>openid</Scope>
          <Scope>profile</Scope>
        </Scopes>
      </WebApplicationInfo>`
    : '';
  const xml = `<?xml version="1.0" encoding="UTF-8"?>
<OfficeApp xmlns="http://schemas.microsoft.com/office/appforoffice/1.1" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:bt="http://schemas.microsoft.com/office/officeappbasictypes/1.0" xmlns:mailappor="http://schemas.microsoft.com/office/mailappversionoverrides/1.0" xsi:type="MailApp">
  <Id>${addinId(config)}</Id>
  <Version>${VERSION_SLOT}</Version>
  <ProviderName>sigsync</ProviderName>
  <DefaultLocale>en-US</DefaultLocale>
  <DisplayName DefaultValue="Email signatures"/>
  <Description DefaultValue="Adds your organization's email signature to the messages you write."/>
  <IconUrl DefaultValue="${url('icon-64.png')}"/>
  <HighResolutionIconUrl DefaultValue="${url('icon-128.png')}"/>
  <SupportUrl DefaultValue="${url('support.html')}"/>
  <AppDomains>
    <AppDomain>${attr(origin)}</AppDomain>
  </AppDomains>
  <Hosts>
    <Host Name="Mailbox"/>
  </Hosts>
  <Requirements>
    <Sets>
      <Set Name="Mailbox" MinVersion="1.1"/>
    </Sets>
  </Requirements>
  <FormSettings>
    <Form xsi:type="ItemRead">
      <DesktopSettings>
        <SourceLocation DefaultValue="${url(`commands.html${q}`)}"/>
        <RequestedHeight>250</RequestedHeight>
      </DesktopSettings>
    </Form>
  </FormSettings>
  <Permissions>ReadWriteItem</Permissions>
  <Rule xsi:type="RuleCollection" Mode="Or">
    <Rule xsi:type="ItemIs" ItemType="Message" FormType="Edit"/>
  </Rule>
  <DisableEntityHighlighting>false</DisableEntityHighlighting>
${versionOverrides(url, q, webApp)}
</OfficeApp>
`;
  return { xml: xml.replace(VERSION_SLOT, manifestVersion(xml)), warnings };
}

/**
 * One form factor's event-based activation (desktop and mobile take the same events). Desktop also
 * runs in shared folders and shared mailboxes (SupportsSharedFolders, its first child, desktop only):
 * Microsoft requires it for compose in a shared mailbox on Mac, in "open another mailbox" on the web
 * and for mailboxes added as accounts in the new Outlook.
 */
function formFactor(name: 'DesktopFormFactor' | 'MobileFormFactor', events: string): string {
  const shared = name === 'DesktopFormFactor' ? '\n            <SupportsSharedFolders>true</SupportsSharedFolders>' : '';
  return `          <${name}>${shared}
            <FunctionFile resid="WebViewRuntime.Url"/>
            <ExtensionPoint xsi:type="LaunchEvent">
              <LaunchEvents>
${events}
              </LaunchEvents>
              <SourceLocation resid="WebViewRuntime.Url"/>
            </ExtensionPoint>
          </${name}>`;
}

/**
 * The Mailbox requirement set the VersionOverrides ask for: one for every event and form factor.
 * Microsoft's pages disagree on what iOS and Android need (the mobile event-based page: they support up
 * to 1.5, its manifest asks 1.5; the OnMessageFromChanged page asks 1.13 with a MobileFormFactor; the
 * mobile API page: above 1.5 still activates), so it is 1.5, which activates there under every reading.
 * Desktop loses nothing: each event still needs its own set (1.10 new message, 1.11 recipients, 1.13
 * From), and a client without it does not raise that event (docs/outlook-addin.md, "Clients that run it").
 * https://learn.microsoft.com/office/dev/add-ins/outlook/mobile-event-based
 */
export const OVERRIDES_MIN_MAILBOX = '1.5';

/** The VersionOverrides part: event-based activation on desktop and mobile, the runtimes, the resources. */
function versionOverrides(url: (p: string) => string, q: string, webApp: string): string {
  const events = LAUNCH_EVENTS.map((e) => `                <LaunchEvent Type="${e.type}" FunctionName="${e.functionName}"/>`).join('\n');
  return `  <VersionOverrides xmlns="http://schemas.microsoft.com/office/mailappversionoverrides" xsi:type="VersionOverridesV1_0">
    <VersionOverrides xmlns="http://schemas.microsoft.com/office/mailappversionoverrides/1.1" xsi:type="VersionOverridesV1_1">
      <Requirements>
        <bt:Sets DefaultMinVersion="${OVERRIDES_MIN_MAILBOX}">
          <bt:Set Name="Mailbox"/>
        </bt:Sets>
      </Requirements>
      <Hosts>
        <Host xsi:type="MailHost">
          <Runtimes>
            <Runtime resid="WebViewRuntime.Url">
              <Override type="javascript" resid="JSRuntime.Url"/>
            </Runtime>
          </Runtimes>
${formFactor('DesktopFormFactor', events)}
${formFactor('MobileFormFactor', events)}
        </Host>
      </Hosts>
      <Resources>
        <bt:Images>
${ICON_SIZES.map((s) => `          <bt:Image id="Icon.${s}x${s}" DefaultValue="${url(`icon-${s}.png`)}"/>`).join('\n')}
        </bt:Images>
        <bt:Urls>
          <bt:Url id="WebViewRuntime.Url" DefaultValue="${url(`commands.html${q}`)}"/>
          <bt:Url id="JSRuntime.Url" DefaultValue="${url(`launchevent.js${q}`)}"/>
        </bt:Urls>
      </Resources>${webApp}
    </VersionOverrides>
  </VersionOverrides>`;
}

/** The handler file as served: the deployment's settings first, then launchevent.js unchanged. */
export function servedHandler(config: Pick<Config, 'PUBLIC_BASE_URL' | 'ADDIN_ENTRA_CLIENT_ID' | 'ADDIN_TIMEOUT_MS'>, opts: { key?: string } = {}): string {
  const settings = {
    base: config.PUBLIC_BASE_URL.replace(/\/+$/, ''),
    sso: Boolean(config.ADDIN_ENTRA_CLIENT_ID),
    key: opts.key ?? null,
    timeout_ms: config.ADDIN_TIMEOUT_MS,
  };
  // JSON in a script: < and the line separators escaped, so no value can end the statement.
  const json = JSON.stringify(settings)
    .replace(/</g, '\\u003c')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
  return `var SIGSYNC_CONFIG = ${json};\n${handlerSource()}`;
}

let source: string | undefined;
export function handlerSource(): string {
  return (source ??= fs.readFileSync(path.join(ADDIN_DIR, 'launchevent.js'), 'utf8'));
}

/** The runtime page, pointing at the handler with the same key (key-only mode). */
export function runtimePage(opts: { key?: string } = {}): string {
  const html = fs.readFileSync(path.join(ADDIN_DIR, 'commands.html'), 'utf8');
  return opts.key ? html.replace('src="launchevent.js"', `src="launchevent.js?key=${attr(encodeURIComponent(opts.key))}"`) : html;
}
