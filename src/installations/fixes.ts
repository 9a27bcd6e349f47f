/**
 * What fixes a failed install, by its error code (connectors/types.ts ConnectorErrorCode): the one
 * text that `sigsync install replay`, `sigsync install list`, GET /v1/installations and the console
 * show next to the provider's message.
 */
export const FIXES: Record<string, string> = {
  user_not_found:
    'the provider has no mailbox at this address (deleted, renamed or not licensed): fix it in the directory or the mail admin console, then replay',
  forbidden:
    'the provider refuses to change this mailbox (mail service off for the user, or a missing permission): turn mail on for the user or grant the permission, then replay',
  unauthorized_client: 'the service account is not allowed the Gmail scope: add it to the domain-wide delegation entry (docs/google-workspace.md), then replay',
  channel_not_found: 'Slack cannot open a DM with this member (deactivated, or a bot): nothing to install there',
  signature_too_long: "the rendered HTML is over the provider's limit: shorten the signature or the campaign banner, publish, then replay",
  multi_signatures_not_supported:
    'this Outlook mailbox keeps one signature (roaming signatures off): the primary one is installed; reply and internal variants are not',
  access_lost: 'the integration lost access: sigsync integration reconnect INTEGRATION_ID --credentials-file FILE, then replay',
  rate_limited: 'the provider asked to slow down: the worker retries by itself; replay later to see it now',
  transient: 'a network or provider failure: the worker retries by itself; replay later to see it now',
  invalid_response: 'the provider answered something unexpected (see the message): replay later; if it stays, report the message',
};

/** The fix of an installation in this status with this error code; null when it needs none or none is known. */
export function fixFor(status: string, errorCode: string | null): string | null {
  if (status !== 'failed' && status !== 'access_lost') return null;
  return FIXES[errorCode ?? (status === 'access_lost' ? 'access_lost' : '')] ?? null;
}
