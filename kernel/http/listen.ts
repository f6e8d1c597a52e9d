// Listen failures worded for the operator: which address and port, and why.
import net from 'node:net';

/** A node listen error as "cannot listen on host:port: <why>". */
export function listenError(host: string, port: number, e: NodeJS.ErrnoException): Error {
  const why = e.code === 'EADDRINUSE' ? `port ${port} is already in use (another server?)`
    : e.code === 'EACCES' ? `not permitted to use port ${port}`
      : e.code === 'EADDRNOTAVAIL' ? `address ${host} is not available on this host`
        : e.message;
  return new Error(`cannot listen on ${host}:${port}: ${why}`);
}

/** uWS does not say why a listen failed; binding the same address with node:net does. */
export function probeListenFailure(host: string, port: number): Promise<Error> {
  return new Promise((resolve) => {
    const probe = net.createServer();
    probe.once('error', (e: NodeJS.ErrnoException) => resolve(listenError(host, port, e)));
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve(new Error(`cannot listen on ${host}:${port}`))));
  });
}

/**
 * The port, free of other sockets (a port shared by SO_REUSEPORT would not say so), or a free one
 * for port 0: uSockets sets SO_REUSEPORT only on a port it is given.
 */
export function portFree(host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', (e: NodeJS.ErrnoException) => reject(listenError(host, port, e)));
    probe.listen({ host, port, exclusive: true }, () => {
      const got = (probe.address() as net.AddressInfo).port;
      probe.close(() => resolve(got));
    });
  });
}
