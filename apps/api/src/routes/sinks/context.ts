import type { ObjectStore } from '@tablemere/store';
import type { RouteDeps } from '../../deps.ts';
import type { BacklogGauge } from '../../domain/intake-backlog.ts';
import type { SendKeyCache } from '../../domain/send-keys.ts';

/** What the sink routes share: the app's deps, the intake store, the backlog gauge and the send keys. */
export interface SinkRouteDeps extends RouteDeps {
  intake: ObjectStore;
  backlog: BacklogGauge;
  sendKeys: SendKeyCache;
}
