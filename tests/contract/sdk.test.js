// Contract tests: the official Alibaba Cloud Node.js SDKs against the emulator, unmodified.
// Run by tests/contract/test_node_sdks.py, which starts an emulator and passes its endpoint
// and keys in the environment (EMULATOR_ENDPOINT, EMULATOR_ACCESS_KEY_ID, ..._SECRET,
// EMULATOR_ACCOUNT_ID, EMULATOR_REGION, FUNCTION_ZIP_B64: a zip whose handler echoes its
// event; NODE_FUNCTION_ZIP_B64: a Node.js function with an initializer). Covers every FC and CloudFlow action the toolkit itself calls (deployer/cloud/).
'use strict';

const { test } = require('node:test');
const assert = require('node:assert/strict');
const FC = require('@alicloud/fc20230330');
const { $OpenApiUtil } = require('@alicloud/openapi-core');
const FnF = require('@alicloud/fnf-2019-03-15');
const OpenApiClient = require('@alicloud/openapi-client');
const Util = require('@alicloud/tea-util');
const { Readable } = require('node:stream');

const env = process.env;
const endpoint = env.EMULATOR_ENDPOINT;
const region = env.EMULATOR_REGION;
const account = env.EMULATOR_ACCOUNT_ID;
const keys = { accessKeyId: env.EMULATOR_ACCESS_KEY_ID,
               accessKeySecret: env.EMULATOR_ACCESS_KEY_SECRET };
assert.ok(endpoint && keys.accessKeyId && keys.accessKeySecret, 'emulator environment missing');

const fc = new FC.default(new $OpenApiUtil.Config({
  ...keys, endpoint, protocol: 'http', regionId: region, readTimeout: 60000 }));
const fnf = new FnF({ ...keys, endpoint: `http://${endpoint}` });
const LONG = { timeout: 30000 };

async function refused(promise, code, status) {
  await assert.rejects(promise, (err) => {
    assert.equal(err.code, code, String(err.message));
    if (status !== undefined) assert.equal(err.statusCode, status);
    return true;
  });
}

test('Function Compute 3.0: create, get, update, list, invoke, delete', async () => {
  const created = await fc.createFunction(new FC.CreateFunctionRequest({
    body: new FC.CreateFunctionInput({
      functionName: 'node-echo', runtime: 'python3.10', handler: 'index.handler',
      memorySize: 256, timeout: 10, description: 'from node',
      environmentVariables: { GREETING: 'hello' },
      code: new FC.InputCodeLocation({ zipFile: env.FUNCTION_ZIP_B64 }),
    }),
  }));
  assert.equal(created.statusCode, 200);
  assert.equal(created.body.functionName, 'node-echo');
  assert.equal(created.body.functionArn, `acs:fc:${region}:${account}:functions/node-echo`);
  assert.equal(created.body.memorySize, 256);

  const got = await fc.getFunction('node-echo', new FC.GetFunctionRequest({}));
  assert.equal(got.body.description, 'from node');
  assert.equal(got.body.environmentVariables.GREETING, 'hello');
  assert.equal(got.body.state, 'Active');

  const updated = await fc.updateFunction('node-echo', new FC.UpdateFunctionRequest({
    body: new FC.UpdateFunctionInput({ memorySize: 512, description: 'updated',
      code: new FC.InputCodeLocation({ zipFile: env.FUNCTION_ZIP_B64 }) }),
  }));
  assert.equal(updated.body.memorySize, 512);
  assert.equal(updated.body.description, 'updated');

  const listed = await fc.listFunctions(new FC.ListFunctionsRequest({ prefix: 'node-' }));
  assert.deepEqual(listed.body.functions.map((f) => f.functionName), ['node-echo']);

  const payload = JSON.stringify({ hello: 'node', n: 42 });
  const invoked = await fc.invokeFunctionWithOptions('node-echo', new FC.InvokeFunctionRequest({
    body: Readable.from([Buffer.from(payload)]) }), new FC.InvokeFunctionHeaders({ xFcLogType: 'Tail' }),
  new Util.RuntimeOptions({}));
  assert.equal(invoked.statusCode, 200);
  const chunks = [];
  for await (const chunk of invoked.body) chunks.push(chunk);
  assert.deepEqual(JSON.parse(Buffer.concat(chunks).toString()), { hello: 'node', n: 42 });
  assert.match(Buffer.from(invoked.headers['x-fc-log-result'], 'base64').toString(),
    /FC Invoke End RequestId/);

  const async_ = await fc.invokeFunctionWithOptions('node-echo', new FC.InvokeFunctionRequest({
    body: Readable.from([Buffer.from('{}')]) }), new FC.InvokeFunctionHeaders({ xFcInvocationType: 'Async' }),
  new Util.RuntimeOptions({}));
  assert.equal(async_.statusCode, 202);

  await refused(fc.getFunction('missing', new FC.GetFunctionRequest({})),
    'FunctionNotFound', 404);
  await refused(fc.createFunction(new FC.CreateFunctionRequest({
    body: new FC.CreateFunctionInput({ functionName: 'node-echo', runtime: 'python3.10',
      handler: 'index.handler', code: new FC.InputCodeLocation({
        zipFile: env.FUNCTION_ZIP_B64 }) }) })), 'FunctionAlreadyExists', 409);

  const deleted = await fc.deleteFunction('node-echo');
  assert.equal(deleted.statusCode, 204);
  await refused(fc.getFunction('node-echo', new FC.GetFunctionRequest({})),
    'FunctionNotFound', 404);
});

test('Function Compute 3.0: a nodejs20 function runs on the local Node.js runtime', async () => {
  // NODE_FUNCTION_ZIP_B64: index.js with a callback handler, an async one and an initializer
  const created = await fc.createFunction(new FC.CreateFunctionRequest({
    body: new FC.CreateFunctionInput({
      functionName: 'node-runtime', runtime: 'nodejs20', handler: 'index.handler', timeout: 10,
      instanceLifecycleConfig: new FC.InstanceLifecycleConfig({
        initializer: new FC.LifecycleHook({ handler: 'index.initialize', timeout: 5 }),
        preStop: new FC.LifecycleHook({ handler: 'index.preStop', timeout: 5 }),
      }),
      code: new FC.InputCodeLocation({ zipFile: env.NODE_FUNCTION_ZIP_B64 }),
    }),
  }));
  assert.equal(created.body.runtime, 'nodejs20');
  assert.equal(created.body.instanceLifecycleConfig.preStop.handler, 'index.preStop');

  const invoked = await fc.invokeFunctionWithOptions('node-runtime', new FC.InvokeFunctionRequest({
    body: Readable.from([Buffer.from('{"n": 2}')]) }),
  new FC.InvokeFunctionHeaders({ xFcLogType: 'Tail' }), new Util.RuntimeOptions({}));
  const chunks = [];
  for await (const chunk of invoked.body) chunks.push(chunk);
  const result = JSON.parse(Buffer.concat(chunks).toString());
  assert.deepEqual(result, { doubled: 4, initialized: true, requestId: invoked.headers['x-fc-request-id'] });
  const tail = Buffer.from(invoked.headers['x-fc-log-result'], 'base64').toString();
  assert.match(tail, /\[info\] doubling 2\n/);
  assert.equal(invoked.headers['x-fc-error-type'], undefined);

  const failed = await fc.invokeFunctionWithOptions('node-runtime', new FC.InvokeFunctionRequest({
    body: Readable.from([Buffer.from('not json')]) }),
  new FC.InvokeFunctionHeaders({}), new Util.RuntimeOptions({}));
  assert.equal(failed.headers['x-fc-error-type'], 'UnhandledInvocationError');
  const errorChunks = [];
  for await (const chunk of failed.body) errorChunks.push(chunk);
  assert.equal(JSON.parse(Buffer.concat(errorChunks).toString()).errorType, 'SyntaxError');
  await fc.deleteFunction('node-runtime');
});

const passFlow = (name) => `Type: StateMachine
SpecVersion: v1
Name: ${name}
StartAt: Hello
States:
  - Type: Pass
    Name: Hello
    End: true
`;

const taskFlow = (name, fn) => `Type: StateMachine
SpecVersion: v1
Name: ${name}
StartAt: Sleep
States:
  - Type: Wait
    Name: Sleep
    Seconds: 1
    Next: Call
  - Type: Task
    Name: Call
    Action: FC:InvokeFunction
    TaskMode: RequestComplete
    Parameters:
      invocationType: Sync
      resourceArn: acs:fc:${region}:${account}:functions/${fn}/LATEST
      body:
        from: node
    End: true
`;

const waitFlow = (name) => `Type: StateMachine
SpecVersion: v1
Name: ${name}
StartAt: Park
States:
  - Type: Wait
    Name: Park
    Seconds: 300
    End: true
`;

test('CloudFlow: flows and executions, long poll, history, stop, errors', async () => {
  await fc.createFunction(new FC.CreateFunctionRequest({ body: new FC.CreateFunctionInput({
    functionName: 'flow-echo', runtime: 'python3.10', handler: 'index.handler',
    code: new FC.InputCodeLocation({ zipFile: env.FUNCTION_ZIP_B64 }) }) }));

  const created = await fnf.createFlow({ Name: 'node-flow', Definition: passFlow('node-flow'),
    Description: 'from node', Type: 'FDL' });
  assert.equal(created.Name, 'node-flow');
  assert.ok(created.RequestId);
  const described = await fnf.describeFlow({ Name: 'node-flow' });
  assert.equal(described.Description, 'from node');
  const updated = await fnf.updateFlow({ Name: 'node-flow',
    Definition: taskFlow('node-flow', 'flow-echo'), Description: 'with a task' });
  assert.equal(updated.Description, 'with a task');
  const flows = await fnf.listFlows({});
  assert.ok(flows.Flows.some((f) => f.Name === 'node-flow'));

  const started = await fnf.startExecution({ FlowName: 'node-flow', ExecutionName: 'run-1',
    Input: '{"k": "v"}' }, { method: 'POST' });
  assert.equal(started.Name, 'run-1');
  // a long poll: answered when the execution ends (about 1 s), well before 20 s
  const began = Date.now();
  const done = await fnf.describeExecution({ FlowName: 'node-flow', ExecutionName: 'run-1',
    WaitTimeSeconds: 20 }, LONG);
  assert.equal(done.Status, 'Succeeded', JSON.stringify(done));
  assert.ok(Date.now() - began < 15000);
  assert.deepEqual(JSON.parse(done.Output).Body, { from: 'node' });

  const listed = await fnf.listExecutions({ FlowName: 'node-flow' });
  assert.deepEqual(listed.Executions.map((e) => e.Name), ['run-1']);
  const history = await fnf.getExecutionHistory({ FlowName: 'node-flow',
    ExecutionName: 'run-1', Limit: 100 });
  const types = history.Events.map((e) => e.Type);
  assert.equal(types[0], 'ExecutionStarted');
  assert.equal(types[types.length - 1], 'ExecutionSucceeded');
  assert.ok(types.includes('TaskSucceeded'), types.join(','));

  await fnf.createFlow({ Name: 'node-wait', Definition: waitFlow('node-wait'),
    Description: '', Type: 'FDL' });
  await fnf.startExecution({ FlowName: 'node-wait', ExecutionName: 'parked' });
  const stopped = await fnf.stopExecution({ FlowName: 'node-wait', ExecutionName: 'parked',
    Error: 'Cancelled', Cause: 'from node' }, { method: 'POST' });
  assert.equal(stopped.Status, 'Stopped');

  await refused(fnf.describeFlow({ Name: 'no-such-flow' }), 'FlowNotExists');
  await refused(fnf.describeExecution({ FlowName: 'node-flow', ExecutionName: 'nope' }),
    'ExecutionNotExists');
  await fnf.deleteFlow({ Name: 'node-flow' });
  await fnf.deleteFlow({ Name: 'node-wait' });
  await refused(fnf.describeFlow({ Name: 'node-flow' }), 'FlowNotExists');
  await fc.deleteFunction('flow-echo');
});

test('openapi-client core: a generic RPC call (STS GetCallerIdentity)', async () => {
  const client = new OpenApiClient.default(new OpenApiClient.Config({
    ...keys, endpoint, protocol: 'http', regionId: region }));
  const params = new OpenApiClient.Params({ action: 'GetCallerIdentity',
    version: '2015-04-01', protocol: 'HTTP', pathname: '/', method: 'POST', authType: 'AK',
    style: 'RPC', reqBodyType: 'formData', bodyType: 'json' });
  const answer = await client.callApi(params, new OpenApiClient.OpenApiRequest({}),
    new Util.RuntimeOptions({}));
  assert.equal(answer.statusCode, 200);
  assert.equal(answer.body.AccountId, account);
  assert.equal(answer.body.IdentityType, 'Account');
});

test('SDK retries sign every attempt anew: injected throttling, then the real answer', async () => {
  // test_node_sdks.py injects ResourceThrottled for the next two GetFunction calls of this name
  await refused(fc.getFunction('node-retry-probe', new FC.GetFunctionRequest({})),
    'ResourceThrottled', 503);
  const retrying = new FC.default(new $OpenApiUtil.Config({
    ...keys, endpoint, protocol: 'http', regionId: region, readTimeout: 60000,
    retryOptions: { retryable: true, noRetryCondition: [],
      retryCondition: [{ maxAttempts: 3, errorCode: ['ResourceThrottled'], exception: [] }] } }));
  // one more refusal, then the retry (new x-acs-date and nonce) reaches the function lookup; a
  // reused nonce would be refused with SignatureNonceUsed
  await refused(retrying.getFunction('node-retry-probe', new FC.GetFunctionRequest({})),
    'FunctionNotFound', 404);
});

const mapFlow = (name) => `Type: StateMachine
SpecVersion: v1
Name: ${name}
StartAt: Fan
States:
  - Type: Map
    Name: Fan
    ProcessorConfig:
      ExecutionMode: Express
    ItemsPath: $Input.items
    MaxConcurrency: 2
    ToleratedFailureCount: 1
    Processor:
      StartAt: Square
      States:
        - Type: Pass
          Name: Square
          OutputConstructor:
            sq.$: $Input.n * $Input.n
          End: true
    End: true
`;

test('CloudFlow: a map run through DescribeMapRun, UpdateMapRun and the parent links', async () => {
  // this SDK release predates the map-run actions: its generic request() sends them
  await fnf.createFlow({ Name: 'node-map', Definition: mapFlow('node-map'), Description: '',
    Type: 'FDL' });
  await fnf.startExecution({ FlowName: 'node-map', ExecutionName: 'm1',
    Input: JSON.stringify({ items: [{ n: 2 }, { n: 3 }, { n: 4 }] }) }, { method: 'POST' });
  const done = await fnf.describeExecution({ FlowName: 'node-map', ExecutionName: 'm1',
    WaitTimeSeconds: 20 }, LONG);
  assert.equal(done.Status, 'Succeeded', JSON.stringify(done));
  const run = JSON.parse(done.Output).MapRunName;
  assert.deepEqual([...done.MapRunNames], [run]);

  const described = await fnf.request('DescribeMapRun', { FlowName: 'node-map',
    ExecutionName: 'm1', MapRunName: run });
  assert.equal(described.Status, 'Succeeded');
  assert.equal(described.Concurrency, 2);
  assert.equal(described.ToleratedFailedCount, 1);
  assert.deepEqual({ ...described.ItemCounts }, { Pending: 0, Running: 0, Succeed: 3, Failed: 0,
    Aborted: 0, Total: 3 });
  assert.ok(described.StartedTime && described.StoppedTime);

  const children = await fnf.listExecutions({ FlowName: 'node-map', MapRunName: run });
  assert.deepEqual(children.Executions.map((e) => e.Name).sort(),
    [0, 1, 2].map((i) => `${run}:${i}`));
  const child = await fnf.describeExecution({ FlowName: 'node-map',
    ExecutionName: `${run}:1` });
  assert.deepEqual({ ...child.ParentExecution }, { FlowName: 'node-map', ExecutionName: 'm1',
    MapRunName: run });

  await refused(fnf.request('UpdateMapRun', { FlowName: 'node-map', ExecutionName: 'm1',
    MapRunName: run, Concurrency: 5 }), 'InvalidArgument');
  await refused(fnf.request('DescribeMapRun', { FlowName: 'node-map', ExecutionName: 'm1',
    MapRunName: 'no-such-run' }), 'InvalidArgument');
  await fnf.deleteFlow({ Name: 'node-map' });
});
