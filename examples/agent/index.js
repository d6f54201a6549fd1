// An example Atrium agent (DESIGN 4.5): receives work from the organization as Standard Webhooks POSTs,
// verifies each signature, and answers at once or later through the agent API.
//
//   PORT=9100 AGENT_SECRET=whsec_... node examples/agent/index.js
//
// - a message is answered at once (200 {result}), unless it starts with "research": then it is accepted
//   (202) and worked on: a progress event, then /complete;
// - an assigned task is accepted, the agent asks its people a question (/questions), and completes the task
//   once the answer arrives as a `type: answer` delivery;
// - a capability action (`type: capability`, from a webhook connector pointing here) is done at once: 200 with
//   what was sent;
// - a repeated delivery (same webhook-id) gets the first answer again and is not worked twice.
import http from 'node:http';
import { Webhook } from 'standardwebhooks';

const secret = process.env.AGENT_SECRET;
if (!secret || !secret.startsWith('whsec_')) {
  console.error('set AGENT_SECRET to the whsec_ secret the organization signs with (its agent delivery secret_env)');
  process.exit(1);
}
const webhook = new Webhook(secret);
const port = Number(process.env.PORT ?? 9100);
const WORK_DELAY_MS = Number(process.env.WORK_DELAY_MS ?? 50);

/** webhook-id → the answer already given, so a redelivery is recognized and answered the same way. */
const answered = new Map();

const server = http.createServer(async (request, response) => {
  if (request.method !== 'POST') return send(response, 405, { error: 'POST only' });
  const body = await readBody(request);
  let delivery;
  try {
    delivery = webhook.verify(body, request.headers);
  } catch {
    log({ event: 'rejected', reason: 'bad signature', webhook_id: request.headers['webhook-id'] ?? null });
    return send(response, 401, { error: 'invalid signature' });
  }
  const id = request.headers['webhook-id'];
  const repeat = answered.get(id);
  log({ event: 'delivery', webhook_id: id, type: delivery.type, operation_id: delivery.operation_id, repeat: Boolean(repeat) });
  if (repeat) return send(response, repeat.status, repeat.body);
  const answer = receive(delivery);
  answered.set(id, answer);
  send(response, answer.status, answer.body);
});

/** What to answer now; longer work goes on in the background. */
function receive(delivery) {
  if (delivery.type === 'message') {
    const text = delivery.text ?? '';
    if (!/^research\b/i.test(text)) return { status: 200, body: { result: { reply: `You said: ${text}` } } };
    background(delivery, async (api) => {
      await api('progress', { message: 'Looking into it', percent: 50 });
      await api('complete', { result: { reply: `Findings on "${text.replace(/^research\s*/i, '')}": nothing alarming.` } });
    });
    return { status: 202, body: { accepted: true } };
  }
  if (delivery.type === 'task') {
    background(delivery, async (api) => {
      await api('progress', { message: 'Started on the task' });
      await api('questions', { text: `Before I start on "${delivery.task?.title ?? 'this task'}": is there a deadline?` });
    });
    return { status: 202, body: { accepted: true } };
  }
  if (delivery.type === 'answer') {
    background(delivery, async (api) => {
      await api('complete', { result: { done: true, told: delivery.answer?.text ?? delivery.text ?? null } });
    });
    return { status: 202, body: { accepted: true } };
  }
  if (delivery.type === 'capability') {
    // A capability whose webhook connector points here (org.yaml: notify_team): the action, approved by the
    // gate or a person, arrives once per webhook-id; "doing" it here is logging it.
    log({ event: 'capability', capability: delivery.capability?.key, input: delivery.input });
    return { status: 200, body: { sent: true, capability: delivery.capability?.key ?? null, text: delivery.input?.text ?? null } };
  }
  return { status: 400, body: { error: `unknown delivery type ${delivery.type}` } };
}

/** Runs `work` after answering, with a client of the agent API at the delivery's callback URL. */
function background(delivery, work) {
  const api = async (path, payload) => {
    const response = await fetch(`${delivery.callback.url}/${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${delivery.callback.token}`, 'content-type': 'application/json' },
      body: JSON.stringify(payload),
    });
    log({ event: 'reported', path, operation_id: delivery.operation_id, status: response.status });
    if (!response.ok) throw new Error(`${path}: HTTP ${response.status} ${await response.text()}`);
    return response.json();
  };
  setTimeout(() => work(api).catch((error) => log({ event: 'error', message: error.message })), WORK_DELAY_MS);
}

function readBody(request) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    request.on('data', (chunk) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

function send(response, status, body) {
  response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

function log(entry) {
  console.log(JSON.stringify(entry));
}

server.listen(port, process.env.HOST ?? '127.0.0.1', () => {
  log({ event: 'listening', port: server.address().port });
});
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => server.close(() => process.exit(0)));
