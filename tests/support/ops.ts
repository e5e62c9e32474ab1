import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { repoRoot } from './stack.ts';

/** The operator's files (ops/) as the tests read them, and the Prometheus binaries that check them. */
export const opsFiles = {
  rules: path.join(repoRoot, 'ops/prometheus/alerts.yml'),
  rulesTests: path.join(repoRoot, 'ops/prometheus/alerts.test.yml'),
  config: path.join(repoRoot, 'ops/prometheus/prometheus.yml'),
  dashboard: path.join(repoRoot, 'ops/grafana/tablemere.json'),
  runbook: path.join(repoRoot, 'ops/RUNBOOK.md'),
};

/** Unpacked from Debian's prometheus package by scripts/ensure-install.mjs --tests. */
export const prometheusBin = (name: 'promtool' | 'prometheus') => path.join(repoRoot, '.venv/prometheus', name);

export interface AlertRule {
  alert: string;
  expr: string;
  annotations: Record<string, string>;
}

export interface DashboardPanel {
  id: number;
  type: string;
  title: string;
  gridPos: { h: number; w: number; x: number; y: number };
  datasource?: { uid: string };
  targets?: Array<{ expr: string; refId: string; datasource: { uid: string } }>;
}

export interface Dashboard {
  schemaVersion: number;
  uid: string;
  panels: DashboardPanel[];
  templating: { list: Array<{ name: string; type: string; query: unknown }> };
}

export function alertRules(): AlertRule[] {
  return (parse(readFileSync(opsFiles.rules, 'utf8')) as { groups: Array<{ rules: AlertRule[] }> }).groups.flatMap((g) => g.rules);
}

export function dashboard(): Dashboard {
  return JSON.parse(readFileSync(opsFiles.dashboard, 'utf8')) as Dashboard;
}

/** Every query of the dashboard as Prometheus takes it: Grafana's variables filled in (all sinks, all jobs, a 5-minute rate window). */
export function dashboardQueries(): Array<{ panel: string; refId: string; expr: string }> {
  return dashboard().panels.flatMap((p) =>
    (p.targets ?? []).map((t) => ({
      panel: `${p.id} ${p.title}`,
      refId: t.refId,
      expr: t.expr.replaceAll('$__rate_interval', '5m').replaceAll('$sink', '.*').replaceAll('$job', '.*'),
    })),
  );
}
