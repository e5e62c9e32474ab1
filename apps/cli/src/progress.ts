import { Presets, SingleBar } from 'cli-progress';
import { size } from './human.ts';

/** What `sink send` reports as it goes; a no-op when nobody watches a terminal. */
export interface SendProgress {
  /** Input bytes behind every byte handed to the API so far. */
  update(bytesDone: number, status: string): void;
  stop(): void;
}

const silent: SendProgress = { update() {}, stop() {} };

/**
 * A progress bar on `stream` (the terminal's stderr) for an input of `totalBytes`, or nothing
 * when there is no terminal (piped, redirected, CI) or the input fits one request.
 */
export function sendProgress(stream: NodeJS.WriteStream | undefined, totalBytes: number, oneBatchBytes: number): SendProgress {
  if (stream === undefined || totalBytes <= oneBatchBytes) return silent;
  const bar = new SingleBar(
    {
      stream,
      format: 'sending {bar} {percentage}% | {done} of {total_size} | {status}',
      hideCursor: true,
      clearOnComplete: true,
      barsize: 30,
      etaBuffer: 20,
    },
    Presets.shades_classic,
  );
  bar.start(totalBytes, 0, { done: size(0), total_size: size(totalBytes), status: '' });
  return {
    update(bytesDone, status) {
      bar.update(Math.min(bytesDone, totalBytes), { done: size(bytesDone), status });
    },
    stop() {
      bar.stop();
    },
  };
}
