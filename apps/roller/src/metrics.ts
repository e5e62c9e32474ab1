import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { FAILURE_REASONS, type FailureReason } from './errors.ts';

const ROLL_OUTCOMES = ['committed', 'empty', 'idle', 'failed'] as const;
export type RollOutcomeLabel = (typeof ROLL_OUTCOMES)[number];

/** The roller's Prometheus metrics, in a registry of their own (served at /metrics). */
export class RollerMetrics {
  readonly registry = new Registry();
  readonly rollSeconds = new Histogram({
    name: 'tablemere_roller_roll_duration_seconds',
    help: 'Wall time of one roll, lease to report, by outcome',
    labelNames: ['outcome'] as const,
    buckets: [0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 40, 80, 160],
    registers: [this.registry],
  });
  readonly rolls = new Counter({
    name: 'tablemere_roller_rolls_total',
    help: 'Rolls by outcome (committed, empty: every row rejected, idle: nothing pending, failed)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });
  readonly backToBack = new Counter({
    name: 'tablemere_roller_back_to_back_rolls_total',
    help: 'Rolls started as soon as the previous roll of the same sink ended, under the lease it held, because the sink was still due',
    registers: [this.registry],
  });
  readonly rows = new Counter({ name: 'tablemere_roller_rows_total', help: 'Rows appended to tables', registers: [this.registry] });
  readonly batches = new Counter({ name: 'tablemere_roller_batches_total', help: 'Intake batches consumed', registers: [this.registry] });
  readonly rejects = new Counter({
    name: 'tablemere_roller_rejected_rows_total',
    help: 'Rows written to rejects files, by reason',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });
  readonly commitRetries = new Counter({
    name: 'tablemere_roller_commit_retries_total',
    help: 'Commit attempts repeated after a lost race or an unknown outcome',
    registers: [this.registry],
  });
  readonly failures = new Counter({
    name: 'tablemere_roller_roll_failures_total',
    help: 'Rolls that ended early, by reason',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });
  readonly lagSeconds = this.perSink('tablemere_roller_lag_seconds', 'Age of the oldest pending batch per sink, as of the last survey or roll');
  readonly pendingBatches = this.perSink('tablemere_roller_pending_batches', 'Pending batches per sink, as of the last survey or roll');
  readonly pendingBytes = this.perSink('tablemere_roller_pending_bytes', 'Bytes of the pending batches per sink, as of the last survey or roll');
  readonly policyRollSeconds = this.perSink('tablemere_roller_policy_roll_seconds', "The sink's roll_seconds: its oldest batch rolls once it has waited this long (as of the last survey)");
  readonly policyRollBytes = this.perSink('tablemere_roller_policy_roll_bytes', "The sink's roll_bytes: its pending batches roll once they hold this many bytes (as of the last survey)");
  readonly failingRolls = this.perSink('tablemere_roller_sink_failing_rolls', 'Failed rolls in a row per stalled sink (a sink whose last roll went through has no series), as of the last survey or roll');
  readonly inFlight = new Gauge({ name: 'tablemere_roller_rolls_in_flight', help: 'Rolls running now', registers: [this.registry] });
  readonly lastTick = new Gauge({
    name: 'tablemere_roller_last_tick_timestamp_seconds',
    help: 'When a tick last reached the API (Unix seconds): the lag gauges are only as fresh as the ticks',
    registers: [this.registry],
  });
  readonly upkeeps = new Counter({
    name: 'tablemere_roller_upkeeps_total',
    help: 'Upkeep runs by outcome (done: something committed, nothing: the table needed nothing, failed)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });
  readonly upkeepSeconds = new Histogram({
    name: 'tablemere_roller_upkeep_duration_seconds',
    help: 'Wall time of one upkeep run, lease to report',
    buckets: [0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600],
    registers: [this.registry],
  });
  readonly upkeepRewritten = new Counter({
    name: 'tablemere_roller_upkeep_rewritten_files_total',
    help: 'Small data files compacted by upkeep',
    registers: [this.registry],
  });
  readonly upkeepRewrittenBytes = new Counter({
    name: 'tablemere_roller_upkeep_rewritten_bytes_total',
    help: 'Bytes of the data files compacted by upkeep',
    registers: [this.registry],
  });
  readonly upkeepExpired = new Counter({
    name: 'tablemere_roller_upkeep_expired_snapshots_total',
    help: 'Snapshots expired by upkeep',
    registers: [this.registry],
  });
  readonly upkeepDeletedFiles = new Counter({
    name: 'tablemere_roller_upkeep_deleted_files_total',
    help: 'Files no kept snapshot reached, deleted by upkeep, by kind (data, manifest, manifest_list; orphan: files no metadata referenced)',
    labelNames: ['kind'] as const,
    registers: [this.registry],
  });
  readonly tableFiles = new Gauge({
    name: 'tablemere_roller_table_files',
    help: "Files in the head of each sink's table after its last upkeep, by kind (data, manifest)",
    labelNames: ['sink', 'kind'] as const,
    registers: [this.registry],
  });

  /** A gauge with one series per sink (the sink's id). */
  private perSink(name: string, help: string): Gauge<'sink'> {
    return new Gauge({ name, help, labelNames: ['sink'] as const, registers: [this.registry] });
  }

  constructor(options: { processMetrics?: boolean } = {}) {
    if (options.processMetrics ?? true) collectDefaultMetrics({ register: this.registry });
    // Every outcome and reason starts at 0, so a rate (and the alert rules) see a process's first failure too.
    for (const outcome of ROLL_OUTCOMES) this.rolls.inc({ outcome }, 0);
    for (const reason of FAILURE_REASONS) this.failures.inc({ reason }, 0);
  }

  failed(reason: FailureReason): void {
    this.failures.inc({ reason });
  }

  /** Replaces the stalled sinks' series with `sinks` (with `replace`), or sets or clears one. */
  setFailing(sinks: ReadonlyArray<{ id: string; attempts: number | null }>, replace: boolean): void {
    if (replace) this.failingRolls.reset();
    for (const sink of sinks) {
      if (sink.attempts === null) this.failingRolls.remove({ sink: sink.id });
      else this.failingRolls.set({ sink: sink.id }, sink.attempts);
    }
  }

  /** Replaces the per-sink lag series with `sinks` (sinks that are gone lose their series). */
  setLag(sinks: ReadonlyArray<{ id: string; batches: number; bytes: number; seconds: number }>, replace: boolean): void {
    if (replace) {
      this.lagSeconds.reset();
      this.pendingBatches.reset();
      this.pendingBytes.reset();
    }
    for (const sink of sinks) {
      this.lagSeconds.set({ sink: sink.id }, sink.seconds);
      this.pendingBatches.set({ sink: sink.id }, sink.batches);
      this.pendingBytes.set({ sink: sink.id }, sink.bytes);
    }
  }

  /** Replaces the per-sink policy series with `sinks`, so alert rules can compare lag and bytes to each sink's own policy. */
  setPolicies(sinks: ReadonlyArray<{ id: string; policy: { roll_seconds: number; roll_bytes: number } }>): void {
    this.policyRollSeconds.reset();
    this.policyRollBytes.reset();
    for (const sink of sinks) {
      this.policyRollSeconds.set({ sink: sink.id }, sink.policy.roll_seconds);
      this.policyRollBytes.set({ sink: sink.id }, sink.policy.roll_bytes);
    }
  }
}
