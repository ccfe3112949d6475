// client-node's informer (makeInformer) on pods, timed the way
// bench/informer/kcr_informer_bench.cc times kcr's against the same replay
// server: Start -> synced, then the updates the server holds until
// POST /start-updates, from that request to the last update reaching the
// handler; then the process's peak RSS (VmHWM) and CPU time.
//
//   node informer.mjs --port=P --pods=N --updates=U
//
// Prints one JSON line: {"sync_ms":..,"updates_ms":..,"peak_rss_mib":..,
// "cpu_s":..}.
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import * as k8s from '@kubernetes/client-node';

function flags() {
  const out = { port: '', pods: '0', updates: '0' };
  for (const arg of process.argv.slice(2)) {
    const m = /^--([^=]+)=(.*)$/.exec(arg);
    if (!m || !(m[1] in out)) throw new Error(`bad argument ${arg}`);
    out[m[1]] = m[2];
  }
  return { port: Number(out.port), pods: Number(out.pods), updates: Number(out.updates) };
}

function peakRssMiB() {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
  return m ? Number(m[1]) / 1024 : -1;
}

async function main() {
  const { port, pods, updates } = flags();
  const server = `http://127.0.0.1:${port}`;
  const kc = new k8s.KubeConfig();
  // client-node refuses plain http unless TLS verification is off.
  kc.loadFromOptions({
    clusters: [{ name: 'bench', server, skipTLSVerify: true }],
    users: [{ name: 'bench' }],
    contexts: [{ name: 'bench', cluster: 'bench', user: 'bench' }],
    currentContext: 'bench',
  });
  const api = kc.makeApiClient(k8s.CoreV1Api);
  const informer = k8s.makeInformer(kc, '/api/v1/pods', () => api.listPodForAllNamespaces());

  let adds = 0;
  let updated = 0;
  let allUpdated;
  const updatesDone = new Promise((resolve) => { allUpdated = resolve; });
  informer.on('add', () => { ++adds; });
  informer.on('update', () => {
    if (++updated === updates) allUpdated();
  });
  informer.on('error', (err) => {
    console.error('informer error:', err);
    process.exit(1);
  });

  const start = performance.now();
  await informer.start();
  const syncMs = performance.now() - start;
  if (adds !== pods) throw new Error(`synced with ${adds} pods, want ${pods}`);

  let updatesMs = 0;
  if (updates > 0) {
    const timeout = setTimeout(() => {
      console.error(`only ${updated} of ${updates} updates after 300 s`);
      process.exit(1);
    }, 300000);
    const t0 = performance.now();
    const answer = await fetch(`${server}/start-updates`, { method: 'POST' });
    if (answer.status !== 200) throw new Error(`start-updates: ${answer.status}`);
    await updatesDone;
    updatesMs = performance.now() - t0;
    clearTimeout(timeout);
  }
  const rss = peakRssMiB();
  const cpu = process.cpuUsage();
  console.log(JSON.stringify({
    sync_ms: Number(syncMs.toFixed(1)),
    updates_ms: Number(updatesMs.toFixed(1)),
    peak_rss_mib: Number(rss.toFixed(1)),
    cpu_s: Number(((cpu.user + cpu.system) / 1e6).toFixed(2)),
    pods: adds,
    updates: updated,
  }));
  await informer.stop();
  process.exit(0);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
