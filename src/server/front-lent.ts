/**
 * The in-memory connection through which the hot routes' front (http-front.ts) lends node:http one request at a
 * time and keeps the real socket: node:http reads exactly the bytes of that request from it, and what node:http
 * writes goes straight to the real socket. Ending it ends the real socket, destroying it destroys the real
 * socket, as node:http's own end/destroy of a connection would; once the front takes the connection away
 * (`detach`), neither reaches the real socket any more.
 */
import { Duplex } from 'node:stream';
import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

export class LentSocket extends Duplex {
  /** True once the front no longer lends this connection: ending or destroying this stream leaves the real socket alone. */
  private detached = false;
  private drainWaiter: (() => void) | undefined;

  /** `answered` runs when node:http has finished the response to the lent request (all of it written to `real`). */
  constructor(
    readonly real: Socket,
    private readonly answered: () => void,
  ) {
    // node:http's header strings go to the socket as they are (it encodes them once).
    super({ allowHalfOpen: true, decodeStrings: false });
    // node:http listens for errors while it has the connection; one after it let go must not throw.
    this.on('error', () => undefined);
  }

  /** Gives node:http the bytes of one whole request. */
  lend(request: Buffer): void {
    this.push(request);
  }

  /** node:http emitted 'request' for the lent bytes: the front waits for its response to finish. */
  responding(res: ServerResponse): void {
    res.once('finish', this.answered);
  }

  /** The front takes the connection back for good (a hand-over to node:http, or the real socket closed). */
  detach(): void {
    this.detached = true;
    this.destroy();
  }

  override _read(): void {
    // Requests are pushed by the front (lend), never pulled.
  }

  override _write(chunk: Buffer | string, encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    if (this.detached || this.real.destroyed) return callback();
    if (typeof chunk === 'string' ? this.real.write(chunk, encoding) : this.real.write(chunk)) return callback();
    this.waitDrain(callback);
  }

  override _writev(chunks: Array<{ chunk: Buffer | string; encoding: BufferEncoding }>, callback: (error?: Error | null) => void): void {
    if (this.detached || this.real.destroyed) return callback();
    this.real.cork();
    let ok = true;
    for (const { chunk, encoding } of chunks) ok = typeof chunk === 'string' ? this.real.write(chunk, encoding) : this.real.write(chunk);
    this.real.uncork();
    if (ok) return callback();
    this.waitDrain(callback);
  }

  override _final(callback: (error?: Error | null) => void): void {
    if (!this.detached && !this.real.destroyed) this.real.end();
    callback();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    if (this.drainWaiter !== undefined) this.real.removeListener('drain', this.drainWaiter);
    this.drainWaiter = undefined;
    if (!this.detached) this.real.destroy();
    callback(error);
  }

  /** node:http calls this after a response that closes the connection: end, and destroy once written (net.Socket's). */
  destroySoon(): void {
    if (this.writable) this.end();
    if (!this.detached) this.real.destroySoon();
  }

  get remoteAddress(): string | undefined {
    return this.real.remoteAddress;
  }
  get remotePort(): number | undefined {
    return this.real.remotePort;
  }
  get remoteFamily(): string | undefined {
    return this.real.remoteFamily;
  }
  get localAddress(): string | undefined {
    return this.real.localAddress;
  }
  get localPort(): number | undefined {
    return this.real.localPort;
  }

  private waitDrain(callback: (error?: Error | null) => void): void {
    // Writable calls _write again only after this callback: one waiter at a time.
    this.drainWaiter = () => {
      this.drainWaiter = undefined;
      callback();
    };
    this.real.once('drain', this.drainWaiter);
  }
}
