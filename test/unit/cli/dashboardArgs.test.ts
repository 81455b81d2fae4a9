// `ascend-finetune dashboard` argument parsing (moved here from the server's tests with the parser).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseDashboardArgs } from '../../../src/cli/dashboardArgs';
import { DashboardServerError } from '../../../src/core/dashboard/server';

describe('dashboard arguments', () => {
  test('bad arguments name the option and the fix', () => {
    assert.throws(() => parseDashboardArgs([]), /needs a run directory or a runs root/);
    assert.throws(() => parseDashboardArgs(['x', '--port', 'abc']), /--port needs a whole number/);
    assert.throws(() => parseDashboardArgs(['x', '--host']), /--host needs an address/);
    assert.throws(() => parseDashboardArgs(['x', '--bogus']), /unknown dashboard option: --bogus/);
    assert.throws(() => parseDashboardArgs(['x', 'y']), /one folder/);
    assert.deepEqual(parseDashboardArgs(['runs', '--port', '8080', '--host', '0.0.0.0']), {
      path: 'runs',
      port: 8080,
      host: '0.0.0.0',
    });
  });

  test('errors are DashboardServerErrors carrying the usage (the CLI prints them without its command list)', () => {
    assert.throws(
      () => parseDashboardArgs(['--port', '70000', 'x']),
      (e: unknown) => e instanceof DashboardServerError && e.message.includes('usage: ascend-finetune dashboard'),
    );
  });
});
