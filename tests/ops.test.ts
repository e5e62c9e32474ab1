import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { alertRules, dashboard as readDashboard, dashboardQueries, opsFiles, prometheusBin } from './support/ops.ts';
import { stackEnv } from './support/stack.ts';

/** The operator's files (ops/): the alert rules and their unit tests by promtool, the Grafana dashboard, and every metric they name against the running stack. */

const rules = alertRules();
const dashboard = readDashboard();
const queryPanels = dashboard.panels.filter((p) => p.type !== 'row');

function promtool(...args: string[]) {
  const bin = prometheusBin('promtool');
  if (!existsSync(bin)) throw new Error(`${bin} is missing: run \`node scripts/ensure-install.mjs --tests\``);
  const run = spawnSync(bin, args, { encoding: 'utf8', cwd: path.dirname(opsFiles.rules) });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

/** The metric names a PromQL expression reads (ours and the process metrics; label names never carry these prefixes). */
function metricNames(expr: string): string[] {
  return expr.match(/\b(?:tablemere|process|nodejs)_[a-z0-9_]+\b/g) ?? [];
}

/** Every series name a /metrics text can be queried by: each `# TYPE`d name, and a histogram's _bucket, _sum and _count. */
async function exported(url: string): Promise<Set<string>> {
  const res = await fetch(`${url}/metrics`);
  expect(res.status).toBe(200);
  const names = new Set<string>();
  for (const [, name, type] of (await res.text()).matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    names.add(name!);
    if (type === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) names.add(`${name}${suffix}`);
  }
  return names;
}

describe('the Prometheus alert rules', () => {
  it('pass promtool check rules', () => {
    const { status, output } = promtool('check', 'rules', opsFiles.rules);
    expect(output).toContain(`SUCCESS: ${rules.length} rules found`);
    expect(status).toBe(0);
  });

  it("pass their unit tests (each alert firing for one series and not for another)", () => {
    const { status, output } = promtool('test', 'rules', opsFiles.rulesTests);
    expect(output).toContain('SUCCESS');
    expect(status).toBe(0);
    const tested = new Set((parse(readFileSync(opsFiles.rulesTests, 'utf8')) as { tests: Array<{ alert_rule_test: Array<{ alertname: string; exp_alerts: unknown[] }> }> }).tests
      .flatMap((t) => t.alert_rule_test)
      .filter((t) => t.exp_alerts.length > 0)
      .map((t) => t.alertname));
    expect([...tested].sort()).toEqual(rules.map((r) => r.alert).sort());
  });

  it('are loaded by the example configuration, which passes promtool check config', () => {
    const { status, output } = promtool('check', 'config', opsFiles.config);
    expect(output).toContain('is valid prometheus config file syntax');
    expect(output).toContain(`SUCCESS: ${rules.length} rules found`);
    expect(status).toBe(0);
  });

  it('link each alert to its section of the runbook', () => {
    const runbook = readFileSync(opsFiles.runbook, 'utf8');
    for (const rule of rules) {
      expect(rule.annotations.runbook_url).toBe(`ops/RUNBOOK.md#${rule.alert.toLowerCase()}`);
      expect(runbook).toContain(`\n## ${rule.alert}\n`);
    }
  });
});

describe('the Grafana dashboard', () => {
  it('is a dashboard on a templated Prometheus data source, panels laid out without overlap', () => {
    expect(dashboard.schemaVersion).toBeGreaterThanOrEqual(36);
    expect(dashboard.uid).toBe('tablemere-sinks');
    expect(dashboard.templating.list.find((v) => v.name === 'DS_PROMETHEUS')).toMatchObject({ type: 'datasource', query: 'prometheus' });
    expect(new Set(dashboard.panels.map((p) => p.id)).size).toBe(dashboard.panels.length);
    const cells = new Set<string>();
    for (const { gridPos, title } of dashboard.panels) {
      expect(gridPos.x + gridPos.w, title).toBeLessThanOrEqual(24);
      for (let x = gridPos.x; x < gridPos.x + gridPos.w; x++) {
        for (let y = gridPos.y; y < gridPos.y + gridPos.h; y++) {
          expect(cells.has(`${x},${y}`), `${title} overlaps another panel`).toBe(false);
          cells.add(`${x},${y}`);
        }
      }
    }
    for (const panel of queryPanels) {
      expect(panel.datasource?.uid, panel.title).toBe('${DS_PROMETHEUS}');
      expect(panel.targets?.length, panel.title).toBeGreaterThan(0);
      for (const target of panel.targets!) expect(target.datasource.uid).toBe('${DS_PROMETHEUS}');
    }
  });

  it("has queries PromQL parses (checked by promtool as recording rules, Grafana's variables filled in)", () => {
    const records = dashboardQueries().map((q, i) => ({ record: `dashboard:query_${i}`, expr: q.expr }));
    expect(records.map((r) => r.expr).join('\n')).not.toMatch(/\$/);
    const dir = mkdtempSync(path.join(tmpdir(), 'tablemere-dashboard-'));
    try {
      const file = path.join(dir, 'dashboard-queries.yml');
      writeFileSync(file, stringify({ groups: [{ name: 'dashboard', rules: records }] }));
      const { status, output } = promtool('check', 'rules', file);
      expect(output).toContain(`SUCCESS: ${records.length} rules found`);
      expect(status).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the metrics the rules and the dashboard read', () => {
  it('are all served by the running stack (the API and the roller), so a renamed metric fails here', async () => {
    const env = stackEnv();
    const served = new Set([...(await exported(env.TABLEMERE_API_URL!)), ...(await exported(env.TABLEMERE_ROLLER_URL!))]);
    const used = new Map<string, string>();
    for (const rule of rules) for (const name of metricNames(rule.expr)) used.set(name, `alert ${rule.alert}`);
    for (const panel of queryPanels) for (const target of panel.targets!) for (const name of metricNames(target.expr)) used.set(name, `panel "${panel.title}"`);
    // Every alert and every panel reads at least one of them.
    expect(rules.every((r) => metricNames(r.expr).length > 0)).toBe(true);
    expect(queryPanels.every((p) => p.targets!.some((t) => metricNames(t.expr).length > 0))).toBe(true);
    const missing = [...used].filter(([name]) => !served.has(name)).map(([name, where]) => `${name} (${where})`);
    expect(missing).toEqual([]);
    expect(used.size).toBeGreaterThan(25);
  });
});
