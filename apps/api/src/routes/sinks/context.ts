import type { ObjectStore } from '@tablemere/store';
import type { RouteDeps } from '../../deps.ts';
import type { BacklogGauge } from '../../domain/intake-backlog.ts';

/** What the sink routes share: the app's deps, the intake store and the backlog gauge. */
export interface SinkRouteDeps extends RouteDeps {
  intake: ObjectStore;
  backlog: BacklogGauge;
}
