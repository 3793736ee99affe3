// Confirmation by elicitation through the official MCP TypeScript SDK
// (`@modelcontextprotocol/sdk`, 2025-11-25 `elicitation/create`), against
// `toolgate serve --demo` as alice, whose Shenzhen trip is APPROVED:
//   1. a client whose user declines is asked once (the question names the trip,
//      says it cannot be undone and asks for a boolean confirm); the result says
//      the user declined and the order stays APPROVED;
//   2. a client whose user accepts is asked once and the order is CANCELLED in
//      the same call.
// Every state is read back through query_travel_order (the database).
// Prints PASS, or FAIL and the reason (exit 1).
// Usage: node elicit_check.mjs URL ALICE_KEY   (TOOLGATE_NODE_MODULES set)

import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

class CheckFailed extends Error {}

function expect(condition, what, got) {
  if (!condition) throw new CheckFailed(`${what}${got === undefined ? '' : `: got ${JSON.stringify(got).slice(0, 800)}`}`);
  console.log(`  ok  ${what}`);
}

async function main([url, key]) {
  const modules = process.env.TOOLGATE_NODE_MODULES;
  if (!modules) throw new CheckFailed('TOOLGATE_NODE_MODULES is not set');
  const sdk = (rel) => import(pathToFileURL(join(modules, '@modelcontextprotocol/sdk/dist/esm', rel)).href);
  const { Client } = await sdk('client/index.js');
  const { StreamableHTTPClientTransport } = await sdk('client/streamableHttp.js');
  const { ElicitRequestSchema } = await sdk('types.js');

  // A client whose user answers `answer` to every question (null: no elicitation capability).
  const connect = async (answer, asked) => {
    const capabilities = answer === null ? {} : { elicitation: { form: {} } };
    const client = new Client({ name: 'elicit-check', version: '1.0.0' }, { capabilities });
    if (answer !== null) {
      client.setRequestHandler(ElicitRequestSchema, async (request) => {
        asked.push(request.params);
        return answer === 'accept' ? { action: 'accept', content: { confirm: true } } : { action: answer };
      });
    }
    const transport = new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { Authorization: `Bearer ${key}` } },
    });
    await client.connect(transport);
    return client;
  };
  const execute = async (client, tool, parameters) =>
    (await client.callTool({ name: 'execute_tool', arguments: { tool_name: tool, parameters } })).structuredContent;
  const reader = await connect(null, []);
  const statusOf = async (orderId) => {
    const found = (await execute(reader, 'query_travel_order', { order_id: orderId })).result;
    return found.status ?? found.order?.status;
  };

  const listed = await execute(reader, 'query_travel_order', { status: 'APPROVED', page_size: 50 });
  const trips = listed.result.orders.filter((o) => o.destination === 'Shenzhen');
  expect(trips.length === 1, 'one APPROVED trip to Shenzhen', listed.result);
  const orderId = trips[0].order_id;

  console.log('--- the user declines');
  let asked = [];
  let client = await connect('decline', asked);
  let envelope = await execute(client, 'cancel_travel_order', { order_id: orderId });
  expect(asked.length === 1, 'the user was asked once', asked);
  const { message, requestedSchema } = asked[0];
  expect(message.includes('Shenzhen') && message.includes('cannot be undone'), 'the question names the trip and says it cannot be undone', message);
  const fields = Object.values(requestedSchema?.properties ?? {});
  expect(fields.length === 1 && fields[0].type === 'boolean', 'the schema is one boolean confirm', requestedSchema);
  expect(envelope.result?.done === false && envelope.result?.confirmation === 'declined', 'the result says the user declined', envelope);
  expect(await statusOf(orderId) === 'APPROVED', 'the order is still APPROVED');
  await client.close();

  console.log('--- the user accepts');
  asked = [];
  client = await connect('accept', asked);
  envelope = await execute(client, 'cancel_travel_order', { order_id: orderId });
  expect(asked.length === 1, 'the user was asked once', asked);
  expect(envelope.success === true && envelope.result?.cancelled === true, 'the write ran in the same call', envelope);
  expect(await statusOf(orderId) === 'CANCELLED', 'the order is CANCELLED');
  await client.close();
  await reader.close();
  console.log('PASS');
}

main(process.argv.slice(2)).then(
  () => process.exit(0),
  (error) => {
    console.log(`FAIL ${error instanceof CheckFailed ? error.message : error?.stack ?? error}`);
    process.exit(1);
  },
);
