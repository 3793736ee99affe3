// Tasks at 2025-11-25 through the official MCP TypeScript SDK
// (`@modelcontextprotocol/sdk`, its experimental tasks client), against the test
// server in direct mode, where `wait_forever` may run as a task:
//   1. initialize advertises `tasks` (list, cancel, tools/call) and tools/list
//      marks wait_forever `execution.taskSupport: "optional"`;
//   2. callToolStream with a task (300 ms) yields taskCreated, then the result;
//   3. a second task (an hour) is not found by another key, is listed, and is
//      cancelled: tasks/get says cancelled;
//   4. a plain callTool (no task) answers as before.
// Prints PASS, or FAIL and the reason (exit 1).
// Usage: node tasks_check.mjs URL KEY OTHER_KEY   (TOOLGATE_NODE_MODULES set)
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

class CheckFailed extends Error {}

function expect(condition, what, got) {
  if (!condition) throw new CheckFailed(`${what}${got === undefined ? '' : `: got ${JSON.stringify(got).slice(0, 800)}`}`);
  console.log(`  ok  ${what}`);
}

async function main([url, key, otherKey]) {
  const modules = process.env.TOOLGATE_NODE_MODULES;
  if (!modules) throw new CheckFailed('TOOLGATE_NODE_MODULES is not set');
  const sdk = (rel) => import(pathToFileURL(join(modules, '@modelcontextprotocol/sdk/dist/esm', rel)).href);
  const { Client } = await sdk('client/index.js');
  const { StreamableHTTPClientTransport } = await sdk('client/streamableHttp.js');
  const connect = async (bearer) => {
    const client = new Client({ name: 'tasks-check', version: '1.0.0' }, { capabilities: {} });
    const transport = new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { Authorization: `Bearer ${bearer}` } },
    });
    await client.connect(transport);
    return client;
  };
  const client = await connect(key);
  const other = await connect(otherKey);
  console.log('--- what the server advertises');
  const caps = client.getServerCapabilities();
  expect(caps?.tasks?.requests?.tools?.call !== undefined && caps.tasks.cancel && caps.tasks.list, 'the tasks capability', caps);
  const tools = (await client.listTools()).tools;
  const wait = tools.find((t) => t.name === 'wait_forever');
  expect(wait?.execution?.taskSupport === 'optional', 'wait_forever may run as a task', wait?.execution);
  const weather = tools.find((t) => t.name === 'query_weather');
  expect(weather && weather.execution === undefined, 'a quick tool is not marked', weather?.execution);

  console.log('--- a task polled to its result');
  const seen = [];
  let result;
  for await (const message of client.experimental.tasks.callToolStream(
    { name: 'wait_forever', arguments: { ms: 300 } }, undefined, { task: { ttl: 60000 } })) {
    seen.push(message.type);
    if (message.type === 'result') result = message.result;
    if (message.type === 'error') throw new CheckFailed(`the task failed: ${message.error}`);
  }
  expect(seen[0] === 'taskCreated' && seen.at(-1) === 'result', 'taskCreated first, the result last', seen);
  expect(result?.structuredContent?.success === true && result.structuredContent.result.waited === true, "the result is the tool's", result);

  console.log('--- a task cancelled');
  const stream = client.experimental.tasks.callToolStream(
    { name: 'wait_forever', arguments: {} }, undefined, { task: { ttl: 60000 } });
  const first = (await stream.next()).value;
  expect(first?.type === 'taskCreated', 'the call answered with a task', first);
  const taskId = first.task.taskId;
  let foreign;
  try { await other.experimental.tasks.getTask(taskId); } catch (error) { foreign = String(error); }
  expect(foreign !== undefined && foreign.includes('no task'), 'another key is told there is no such task', foreign);
  const listed = await client.experimental.tasks.listTasks();
  expect(listed.tasks.some((t) => t.taskId === taskId && t.status === 'working'), 'the task is listed, working', listed);
  expect(!(await other.experimental.tasks.listTasks()).tasks.some((t) => t.taskId === taskId), "it is not in the other key's list");
  const cancelled = await client.experimental.tasks.cancelTask(taskId);
  expect(cancelled.status === 'cancelled', 'tasks/cancel answers the cancelled task', cancelled);
  const got = await client.experimental.tasks.getTask(taskId);
  expect(got.status === 'cancelled', 'tasks/get says cancelled', got);
  await stream.return(undefined);
  console.log(`CANCELLED ${taskId}`);

  console.log('--- a client that does not ask gets the plain call');
  const plain = await client.callTool({ name: 'wait_forever', arguments: { ms: 10 } });
  expect(plain.structuredContent?.success === true && plain.task === undefined, 'a plain result', plain);
  await client.close();
  await other.close();
  console.log('PASS');
}

main(process.argv.slice(2)).then(() => process.exit(0), (error) => {
  console.log(`FAIL ${error instanceof CheckFailed ? error.message : error?.stack ?? error}`);
  process.exit(1);
});
