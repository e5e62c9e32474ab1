import type { InternalSink } from '@tablemere/contracts';

/**
 * Whether a sink's table is due for upkeep: upkeep is on (`intervalSeconds` > 0), the sink has
 * rolled since its last upkeep (a table nothing appended to needs none), and that upkeep is at
 * least `intervalSeconds` old. A sink never upkept is due once it has rolled.
 */
export function upkeepDue(sink: Pick<InternalSink, 'last_roll_at'> & { upkeep: Pick<InternalSink['upkeep'], 'last_at'> }, now: Date, intervalSeconds: number): boolean {
  if (intervalSeconds <= 0 || sink.last_roll_at === null) return false;
  const last = sink.upkeep.last_at;
  if (last === null) return true;
  const lastAt = Date.parse(last);
  return Date.parse(sink.last_roll_at) > lastAt && now.getTime() - lastAt >= intervalSeconds * 1000;
}
