// The client tests' runner: named checks, run in order, each failure
// printed with its stack; the process exits 1 if any failed. run.sh copies
// this file beside each client test.
const checks = [];

export function check(name, fn) {
  checks.push([name, fn]);
}

export async function runChecks() {
  let failed = 0;
  for (const [name, fn] of checks) {
    try {
      await fn();
      console.log(`ok   ${name}`);
    } catch (e) {
      failed++;
      console.log(`FAIL ${name}\n     ${e.stack || e}`);
    }
  }
  console.log(failed ? `${failed} of ${checks.length} failed` : `all ${checks.length} passed`);
  process.exit(failed ? 1 : 0);
}
