/**
 * Whether a process runs in sandbox mode, and what sandbox mode changes in the configuration.
 * Kept apart from demo.ts so that the CLI can ask without loading the emulators.
 */
import type { Config } from '../config.ts';

/** Whether `serve` runs the sandbox: SANDBOX when set, else only without DATABASE_URL. */
export function sandboxEnabled(config: Pick<Config, 'SANDBOX' | 'DATABASE_URL'>): boolean {
  return config.SANDBOX ?? !config.DATABASE_URL;
}

/**
 * The configuration of a sandbox-mode process: the sandbox is a demo on loopback, so its webhook
 * receivers may be `http://127.0.0.1:...` — ALLOW_INSECURE_OUTBOUND_URLS is on unless the environment sets
 * it (`ALLOW_INSECURE_OUTBOUND_URLS=0`, or its old name ALLOW_INSECURE_WEBHOOKS=0, keeps the strict rules). Outside sandbox mode the config is unchanged.
 */
export function sandboxConfig<C extends Pick<Config, 'SANDBOX' | 'DATABASE_URL' | 'ALLOW_INSECURE_OUTBOUND_URLS'>>(
  config: C,
  env: NodeJS.ProcessEnv = process.env,
): C {
  if (!sandboxEnabled(config) || (env.ALLOW_INSECURE_OUTBOUND_URLS ?? env.ALLOW_INSECURE_WEBHOOKS ?? '') !== '') return config;
  return { ...config, ALLOW_INSECURE_OUTBOUND_URLS: true };
}
