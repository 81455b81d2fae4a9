// Multi-node runs on the extension's side: the names a spec gives its machines, which targets they
// are, and the wizard's answer about machines in the spec it writes (the launch itself runs for
// real in test/integration/multiNode.test.ts).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { nodeTargets, specNodes } from '../../../src/core/runs/multiNode';
import { buildSpec, choicesFromSpec, mergeSpec, RECIPE_DEFAULTS } from '../../../src/core/spec/builder';
import { buildTargets, nodeAddress, type TargetInputs } from '../../../src/core/targets/model';

const inputs: TargetInputs = {
  localRunner: { python: '/venv/bin/python', runnerDir: '/ext/runner' },
  localRunsRoot: '/runs',
  hostname: 'atlas-01',
  sshConfigHosts: [
    { alias: 'npu-a', hostName: '10.0.0.1', file: 'c', line: 1 },
    { alias: 'npu-b', hostName: '10.0.0.2', file: 'c', line: 4 },
    { alias: 'pattern', hostName: '%h.cluster.example', file: 'c', line: 7 },
  ],
  sshSettings: [{ host: 'npu-c' }],
  remoteDefaults: { python: 'python3', runsRoot: '.ascend-finetune/runs' },
};
const targets = buildTargets(inputs);
const byId = (id: string) => targets.find((t) => t.id === id)!;

test('a target is named in device.nodes by the address other machines reach it by', () => {
  // msrun resolves the master with getaddrinfo: an ssh alias is no name for it, its HostName is.
  assert.equal(nodeAddress(byId('ssh:npu-a')), '10.0.0.1');
  assert.equal(nodeAddress(byId('ssh:pattern')), 'pattern.cluster.example', '%h is the alias');
  assert.equal(nodeAddress(byId('ssh:npu-c')), 'npu-c', 'no HostName: the host as written');
  assert.equal(nodeAddress(byId('local')), 'atlas-01');
});

test("a spec's nodes map to targets by address or alias, the first being the target launched on", () => {
  const master = byId('ssh:npu-a');
  const found = nodeTargets(['10.0.0.1', 'npu-b', 'npu-c'], master, targets);
  assert.ok('found' in found);
  assert.deepEqual(
    found.found.map((t) => t.id),
    ['ssh:npu-a', 'ssh:npu-b', 'ssh:npu-c'],
  );
  // A name no SSH target has, and the master named again, are missing (this machine is never a joiner).
  assert.deepEqual(nodeTargets(['10.0.0.1', '10.9.9.9', 'atlas-01', '10.0.0.1'], master, targets), {
    missing: ['10.9.9.9', 'atlas-01', '10.0.0.1'],
  });
  assert.deepEqual(specNodes({ device: { nodes: ['a', 'b'] } }), ['a', 'b']);
  assert.deepEqual(specNodes({ device: { ids: [0] } }), []);
  assert.deepEqual(specNodes(null), []);
});

test("the wizard's machines go into device.nodes, and one machine drops a spec file's nodes", () => {
  const choices = {
    ...RECIPE_DEFAULTS,
    name: 'r',
    dataTrain: '/d',
    deviceIds: [0, 1],
    devices: 2,
    nodes: ['10.0.0.1', '10.0.0.2'],
  };
  const built = buildSpec(choices);
  assert.deepEqual(built.device, { ids: [0, 1], nodes: ['10.0.0.1', '10.0.0.2'] });
  assert.deepEqual(
    choicesFromSpec(built).nodes,
    ['10.0.0.1', '10.0.0.2'],
    'a spec file starts the wizard with its machines',
  );
  assert.deepEqual(buildSpec({ ...choices, nodes: ['10.0.0.1'] }).device, { ids: [0, 1] }, 'one name is one machine');

  const file = { name: 'r', device: { ids: [0], nodes: ['10.0.0.1', '10.0.0.2'], master_port: 29500 } };
  const oneMachine = mergeSpec(file, buildSpec({ ...choices, nodes: undefined }));
  assert.deepEqual(oneMachine.device, { ids: [0, 1], master_port: 29500 }, 'the other fields of device stay');
  const twoMachines = mergeSpec(file, built);
  assert.deepEqual(twoMachines.device, { ids: [0, 1], nodes: ['10.0.0.1', '10.0.0.2'], master_port: 29500 });
});
