/**
 * The address a process listens on (HOST with PORT, or WORKER_METRICS_PORT): what a failure to
 * listen means as a configuration error (one line, exit 2), and a probe that finds it before the
 * process opens its database, so a taken port is refused at once, not after a first start has
 * built a whole embedded cluster.
 */
import net from 'node:net';
import { ConfigError } from './configError.ts';

export type PortVariable = 'PORT' | 'WORKER_METRICS_PORT';

/** The configuration error that a failed listen on host:port means, or the error itself. */
export function listenError(err: unknown, host: string, port: number, variable: PortVariable): unknown {
  const code = (err as NodeJS.ErrnoException).code;
  const at = `${host}:${port}`;
  const zero = variable === 'PORT' ? '; 0 picks a free one' : '';
  if (code === 'EADDRINUSE') return new ConfigError(variable, `a port nothing else listens on (${at} is in use${zero})`);
  if (code === 'EACCES')
    return new ConfigError(variable, `a port this user may listen on (${at} is refused${variable === 'PORT' ? '; ports below 1024 need privileges' : ''})`);
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND') return new ConfigError('HOST', `an address of this machine (${host} is not)`);
  return err;
}

/** Listens on host:port and lets it go at once; throws listenError's answer when it cannot. Port 0 is always free. */
export async function probeAddress(host: string, port: number, variable: PortVariable): Promise<void> {
  if (port === 0) return;
  const probe = net.createServer();
  try {
    await new Promise<void>((resolve, reject) => {
      probe.once('error', reject);
      probe.listen({ host, port, exclusive: true }, resolve);
    });
  } catch (err) {
    throw listenError(err, host, port, variable);
  } finally {
    await new Promise<void>((resolve) => (probe.listening ? probe.close(() => resolve()) : resolve()));
  }
}
