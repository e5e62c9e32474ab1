import type { RouteDeps } from '../../deps.ts';
import type { IntakeStores } from '../../domain/intake/stores.ts';
import type { BacklogGauge } from '../../domain/intake/backlog.ts';
import type { InFlight } from '../../domain/intake/in-flight.ts';
import type { BodyPool } from '../../http/body-pool.ts';
import type { SegmentWriter } from '../../domain/intake/segments.ts';
import type { SendKeyCache } from '../../domain/sinks/send-keys.ts';

/** What the sink routes share: the app's deps, the intake store, the backlog gauge, the send keys and the ledger's group writers. */
export interface SinkRouteDeps extends RouteDeps {
  /** Each warehouse's intake store (the platform's, or the warehouse's sink_bucket). */
  intakes: IntakeStores;
  backlog: BacklogGauge;
  sendKeys: SendKeyCache;
  /** Claims, stores and settles sends, a segment at a time per sink. */
  segments: SegmentWriter;
  /** Buffers for large send bodies. */
  bodies: BodyPool;
  /** The sends being read or stored now, weighed in bytes and capped per sink and per process. */
  inFlight: InFlight;
}
