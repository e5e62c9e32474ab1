import { Presets, SingleBar } from 'cli-progress';
import { size } from './human.ts';

/** A long step's progress in bytes; a no-op when nobody watches a terminal. */
export interface Progress {
  /** False when nothing is drawn: remarks must then go out as lines. */
  readonly visible: boolean;
  update(bytesDone: number, status?: string): void;
  stop(): void;
}

const silent: Progress = { visible: false, update() {}, stop() {} };

/**
 * A progress bar labelled `label` (e.g. `sending`) on `terminal` (stderr, when it is one) for
 * `totalBytes`, or nothing when there is no terminal (piped, redirected, CI) or the work is
 * smaller than `worthShowing`.
 */
export function progressBar(terminal: NodeJS.WriteStream | undefined, label: string, totalBytes: number, worthShowing: number): Progress {
  if (terminal === undefined || totalBytes <= worthShowing) return silent;
  const bar = new SingleBar(
    {
      stream: terminal,
      format: `${label} {bar} {percentage}% | {done} of {total_size} | {status}`,
      hideCursor: true,
      clearOnComplete: true,
      barsize: 30,
    },
    Presets.shades_classic,
  );
  bar.start(totalBytes, 0, { done: size(0), total_size: size(totalBytes), status: '' });
  let last = '';
  return {
    visible: true,
    update(bytesDone, status) {
      if (status !== undefined) last = status;
      bar.update(Math.min(bytesDone, totalBytes), { done: size(bytesDone), status: last });
    },
    stop() {
      bar.stop();
    },
  };
}

/** Passes `input` through, reporting the bytes read so far after each chunk. */
export async function* counted(input: AsyncIterable<Uint8Array>, onBytes: (bytes: number) => void): AsyncGenerator<Uint8Array> {
  let bytes = 0;
  for await (const chunk of input) {
    yield chunk;
    bytes += chunk.byteLength;
    onBytes(bytes);
  }
}
