#!/usr/bin/env node
// Installs what a fresh clone lacks: npm packages, the project's Python venv (SeaweedFS and the
// test readers), with --tests the Spark reader (PySpark and Iceberg's jars), Prometheus, Benthos
// and Telegraf, and with --tests or --catalog reference|nessie the JVM catalogs' jars. Plain Node
// with no dependencies, because it runs before `npm ci` has.
// Re-runs an install only when its inputs changed (a hash stamp beside the install).
import { createHash } from 'node:crypto';
import { createReadStream, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureBenthos } from '../tests/shippers/benthos/build.mjs';
import { ensureTelegraf } from '../tests/shippers/telegraf/build.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const quiet = process.argv.includes('--quiet');
// The test readers only the tests need (Spark, ~450 MB): `npm test` and CI ask for them, `npm start` does not.
const forTests = process.argv.includes('--tests');
// `npm start -- --catalog NAME` needs that catalog's jars; the tests need both.
const catalogArg = process.argv[process.argv.indexOf('--catalog') + 1];
const wantsCatalog = (name) => forTests || (process.argv.includes('--catalog') && catalogArg === name);

function hashOf(files, extra) {
  const h = createHash('sha256');
  for (const f of files) h.update(readFileSync(path.join(root, f)));
  h.update(extra);
  return h.digest('hex');
}

function run(cmd, args, what) {
  if (!quiet) console.log(`[install] ${what}: ${cmd} ${args.join(' ')}`);
  const r = spawnSync(cmd, args, { cwd: root, stdio: quiet ? ['ignore', 'ignore', 'inherit'] : 'inherit' });
  if (r.status !== 0) {
    console.error(`[install] ${what} failed (exit ${r.status ?? r.signal}): ${cmd} ${args.join(' ')}`);
    process.exit(1);
  }
}

/** Runs `install` unless the stamp says it already ran on these inputs (files, plus `extra`). */
async function ensure(stampFile, inputs, install, extra = '') {
  const stamp = path.join(root, stampFile);
  const want = hashOf(inputs, extra);
  if (existsSync(stamp) && readFileSync(stamp, 'utf8') === want) return;
  await install();
  writeFileSync(stamp, want);
}

// `npm ci` on a fresh clone; an existing tree is updated in place so running processes keep working.
await ensure('node_modules/.tablemere-install', ['package-lock.json'], () =>
  existsSync(path.join(root, 'node_modules'))
    ? run('npm', ['install', '--no-audit', '--no-fund'], 'npm packages')
    : run('npm', ['ci', '--no-audit', '--no-fund'], 'npm packages'),
);

// The send route's JSON check in C (apps/api/native/scan-array.c, research/42), built on x86_64
// where there is a C compiler. Elsewhere, or without one, the API checks JSON in JavaScript
// alone, ~2x slower on a large send, and its start line says so (json_check). The stamp holds
// the compiler and its flags as well as the source, so a change of either rebuilds. Built
// beside and renamed into place, so a running API keeps the library it loaded.
const nativeScan = 'apps/api/native/build/libtmscan.so';
const cc = process.env.CC ?? 'cc';
const scanFlags = ['-O3', '-std=c11', '-Wall', '-Wextra', '-Werror', '-pthread', '-shared', '-fPIC'];
if (process.arch !== 'x64') {
  if (!quiet) console.log(`[install] ${process.arch}: the send route checks JSON in JavaScript alone (the C check is built for x86_64 only)`);
} else if (hasCommand(cc)) {
  if (!existsSync(path.join(root, nativeScan))) rmSync(path.join(root, 'apps/api/native/build/.tablemere-install'), { force: true });
  await ensure(
    'apps/api/native/build/.tablemere-install',
    ['apps/api/native/scan-array.c'],
    () => {
      mkdirSync(path.join(root, 'apps/api/native/build'), { recursive: true });
      run(cc, [...scanFlags, '-o', `${nativeScan}.new`, 'apps/api/native/scan-array.c'], "the send route's JSON check in C");
      renameSync(path.join(root, `${nativeScan}.new`), path.join(root, nativeScan));
    },
    JSON.stringify({ cc, scanFlags }),
  );
} else if (!quiet) {
  console.log(`[install] no C compiler (${cc}): the send route checks JSON in JavaScript alone (slower on large sends)`);
}

const python = process.env.PYTHON ?? 'python3';
const venvPython = path.join(root, '.venv', 'bin', 'python');
await ensure('.venv/.tablemere-install', ['requirements.txt'], () => {
  if (!existsSync(venvPython)) run(python, ['-m', 'venv', '.venv'], 'python venv');
  run(venvPython, ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', '--only-binary=:all:', '-r', 'requirements.txt'], 'python packages');
});

// The Spark reader (tests/readers/spark_table.py): PySpark, then Iceberg's Spark runtime and its
// AWS bundle (S3FileIO) from Maven Central, pinned by size and SHA-256 so a truncated or altered
// download is never used. Same Iceberg version for both.
const ICEBERG = '1.10.1';
const MAVEN = 'https://repo1.maven.org/maven2/org/apache/iceberg';
const SPARK_JARS = [
  { artifact: 'iceberg-spark-runtime-3.5_2.12', bytes: 47140434, sha256: '39ea09e6c03550a300b9d9ab498949836d2d434e441da4c12a943a086e396940' },
  { artifact: 'iceberg-aws-bundle', bytes: 62673230, sha256: '86bf20892ea5b4c17688f19b075399885f6aa5303f6b2dc9f491e76ceef9633b' },
];
const jarDir = path.join(root, '.venv', 'spark-jars');

async function sha256Of(file) {
  const h = createHash('sha256');
  for await (const chunk of createReadStream(file)) h.update(chunk);
  return h.digest('hex');
}

/** Downloads `url` to `file` unless it is there already with this size and SHA-256. */
async function fetchPinned({ url, file, bytes, sha256, what }) {
  if (existsSync(file) && statSync(file).size === bytes && (await sha256Of(file)) === sha256) return;
  const fail = (why) => {
    console.error(`[install] cannot get ${path.basename(file)}, which ${what} needs: ${why}\n[install]   from ${url}`);
    process.exit(1);
  };
  if (!quiet) console.log(`[install] ${what}: ${url}`);
  const partial = `${file}.partial`;
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(600_000) });
    if (!res.ok) fail(`HTTP ${res.status}`);
    writeFileSync(partial, Buffer.from(await res.arrayBuffer()));
  } catch (error) {
    rmSync(partial, { force: true });
    fail(error.cause?.message ?? error.message);
  }
  const [size, digest] = [statSync(partial).size, await sha256Of(partial)];
  if (size !== bytes || digest !== sha256) {
    rmSync(partial, { force: true });
    fail(`got ${size} bytes with SHA-256 ${digest}, expected ${bytes} bytes with SHA-256 ${sha256}`);
  }
  renameSync(partial, file);
}

if (forTests) await ensure(
  '.venv/.tablemere-spark-install',
  ['requirements-spark.txt'],
  async () => {
    // pyspark alone comes as a source archive; everything else stays wheels only.
    run(venvPython, ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', '--only-binary=:all:', '--no-binary=pyspark', '-r', 'requirements-spark.txt'], 'spark reader');
    mkdirSync(jarDir, { recursive: true });
    for (const { artifact, bytes, sha256 } of SPARK_JARS) {
      await fetchPinned({
        url: `${MAVEN}/${artifact}/${ICEBERG}/${artifact}-${ICEBERG}.jar`,
        file: path.join(jarDir, `${artifact}-${ICEBERG}.jar`),
        bytes,
        sha256,
        what: 'the Spark test reader',
      });
    }
  },
  JSON.stringify({ ICEBERG, SPARK_JARS }),
);

// The JVM catalogs the stack can run beside SeaweedFS's (scripts/stack/jvm-catalogs.ts):
// Iceberg's reference REST catalog, its classpath resolved by Maven from a pinned pom (checksums
// enforced), and Nessie's runner jar, pinned by size and SHA-256.
const catalogJars = path.join(root, '.venv', 'catalog-jars');
if (wantsCatalog('reference')) await ensure(
  '.venv/.tablemere-reference-catalog-install',
  ['scripts/stack/java/reference-catalog.pom.xml'],
  async () => {
    const out = path.join(catalogJars, 'reference');
    rmSync(out, { recursive: true, force: true });
    run('mvn', ['-q', '-B', '--strict-checksums', '-f', 'scripts/stack/java/reference-catalog.pom.xml', 'dependency:copy-dependencies', `-DoutputDirectory=${out}`, '-DincludeScope=runtime'], 'reference catalog jars');
  },
);
const NESSIE = { version: '0.99.0', bytes: 245069033, sha256: 'ce9fa33e2878bf5ea3981876b9e6204cabc0362b3dd82326b10e47271a78c417' };
if (wantsCatalog('nessie')) await ensure(
  '.venv/.tablemere-nessie-install',
  [],
  async () => {
    mkdirSync(catalogJars, { recursive: true });
    await fetchPinned({
      url: `https://repo1.maven.org/maven2/org/projectnessie/nessie/nessie-quarkus/${NESSIE.version}/nessie-quarkus-${NESSIE.version}-runner.jar`,
      file: path.join(catalogJars, `nessie-quarkus-${NESSIE.version}-runner.jar`),
      bytes: NESSIE.bytes,
      sha256: NESSIE.sha256,
      what: 'the Nessie catalog',
    });
  },
  JSON.stringify(NESSIE),
);

function hasCommand(name) {
  return spawnSync('sh', ['-c', `command -v "${name}"`], { stdio: 'ignore' }).status === 0;
}
// A fresh machine's apt may have no package lists yet: refreshed once, only as root.
let aptUpdated = false;
function aptUpdate() {
  if (aptUpdated || process.getuid?.() !== 0) return;
  process.env.DEBIAN_FRONTEND = 'noninteractive';
  run('apt-get', ['update', '-qq'], 'apt package lists');
  aptUpdated = true;
}
// The status page's browser test (tests/status-page.test.ts) drives Debian's chromium package
// (puppeteer-core downloads no browser). Present: one `command -v`, nothing else. Missing: apt
// installs it when running as root (CI), else the message says what to install. CHROMIUM_PATH
// names another Chromium binary instead.
if (forTests && !process.env.CHROMIUM_PATH && !hasCommand('chromium')) {
  if (process.getuid?.() !== 0 || !hasCommand('apt-get')) {
    console.error("[install] the status page test needs Chromium: install Debian's chromium package (apt-get install chromium), or set CHROMIUM_PATH to a Chromium binary");
    process.exit(1);
  }
  aptUpdate();
  run('apt-get', ['install', '-y', '-qq', '--no-install-recommends', 'chromium', 'fonts-liberation'], 'chromium for the status page test');
}

/**
 * Debian's package `name`, downloaded and unpacked into `dir` (never installed: no service, no
 * user, no root needed to use it): `files` maps each path inside the package to its name in
 * `dir`. Re-fetched when Debian's candidate version changes. Without apt (not a Debian-based
 * machine) it stops, saying what is missing.
 */
async function debianPackage({ name, dir, files, what }) {
  const candidateOf = () => {
    const policy = spawnSync('apt-cache', ['policy', name], { encoding: 'utf8' });
    return { policy, candidate: /Candidate: (\S+)/.exec(policy.stdout ?? '')?.[1] };
  };
  let { policy, candidate } = candidateOf();
  if ((!candidate || candidate === '(none)') && !policy.error && hasCommand('apt-get')) {
    aptUpdate();
    ({ policy, candidate } = candidateOf());
  }
  if (!candidate || candidate === '(none)') {
    const why = policy.error ? 'apt-cache is not available here (a Debian-based machine has it)' : 'apt does not know that package here: run `apt-get update` (as root) and try again';
    console.error(`[install] ${what} come from Debian's \`${name}\` package: ${why}`);
    process.exit(1);
  }
  const stamp = `.venv/.tablemere-${name}-install`;
  if (!Object.values(files).every((file) => existsSync(path.join(dir, file)))) rmSync(path.join(root, stamp), { force: true });
  await ensure(stamp, [], () => {
    const download = path.join(dir, 'download');
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(download, { recursive: true });
    aptUpdate(); // a stale list can name a version the mirror no longer has
    const fetched = spawnSync('apt-get', ['-o', 'APT::Sandbox::User=root', 'download', `${name}=${candidate}`], { cwd: download, stdio: quiet ? ['ignore', 'ignore', 'inherit'] : 'inherit' });
    if (fetched.status !== 0) {
      console.error(`[install] apt-get download ${name}=${candidate} failed: run \`apt-get update\` (as root) and try again`);
      process.exit(1);
    }
    const deb = readdirSync(download).find((f) => f.endsWith('.deb'));
    run('dpkg-deb', ['-x', path.join(download, deb), path.join(dir, 'root')], what);
    for (const [from, to] of Object.entries(files)) renameSync(path.join(dir, 'root', from), path.join(dir, to));
    rmSync(download, { recursive: true, force: true });
    rmSync(path.join(dir, 'root'), { recursive: true, force: true });
  }, candidate);
}

// Benthos and Telegraf for the shipper tests (apps/roller/test/shippers-benthos.test.ts,
// shippers-telegraf.test.ts), built from the Go module proxy: 50-100 s each cold on two cores,
// so here, alone, rather than in the tests' set-up beside other test files; the tests find them
// cached (their own stamps, .cache/tools/).
if (forTests) {
  try {
    ensureBenthos({ quiet });
    ensureTelegraf({ quiet });
  } catch (error) {
    console.error(`[install] ${error.message}`);
    process.exit(1);
  }
}

// Prometheus's promtool, which checks and unit-tests the alert rules (ops/prometheus/), and its
// server, which the tests run against the stack: Debian's `prometheus` package holds both as
// static Go binaries.
if (forTests) {
  await debianPackage({
    name: 'prometheus',
    dir: path.join(root, '.venv', 'prometheus'),
    files: { 'usr/bin/promtool': 'promtool', 'usr/bin/prometheus': 'prometheus' },
    what: "promtool and Prometheus (the alert rules' checks)",
  });
}

