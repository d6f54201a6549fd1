// The app side of MCP Apps (io.modelcontextprotocol/ui, spec 2026-01-26), written by hand: the extension's own
// App class bundles the MCP SDK and zod (over 500 kB), while these views need four messages — ui/initialize,
// the tool result, ui/open-link and tools/call — over postMessage JSON-RPC. Every value is put into the page
// with textContent, never as markup.
const view = document.getElementById('view');
const status = document.getElementById('status');
const host = window.parent;
const pending = new Map();
let nextId = 1;

function request(method, params) {
  const id = nextId++;
  host.postMessage({ jsonrpc: '2.0', id, method, params }, '*');
  return new Promise((resolve, reject) => pending.set(id, { resolve, reject }));
}

function notify(method, params) {
  host.postMessage({ jsonrpc: '2.0', method, params }, '*');
}

window.addEventListener('message', (event) => {
  if (event.source !== host) return;
  const message = event.data;
  if (!message || message.jsonrpc !== '2.0') return;
  if (message.id !== undefined && pending.has(message.id) && !message.method) {
    const { resolve, reject } = pending.get(message.id);
    pending.delete(message.id);
    if (message.error) reject(Object.assign(new Error(message.error.message), { code: message.error.code, data: message.error.data }));
    else resolve(message.result);
  } else if (message.method === 'ui/notifications/tool-result') {
    show(message.params);
  } else if (message.method === 'ui/resource-teardown' && message.id !== undefined) {
    host.postMessage({ jsonrpc: '2.0', id: message.id, result: {} }, '*');
  }
});

function element(tag, text, attributes) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  for (const [name, value] of Object.entries(attributes || {})) node.setAttribute(name, value);
  return node;
}

/** A definition list of [term, value] pairs; values that are elements are put in as they are. */
function facts(pairs) {
  const list = element('dl');
  for (const [term, value] of pairs) {
    if (value === undefined || value === null) continue;
    list.append(element('dt', term));
    const detail = element('dd');
    if (value instanceof Node) detail.append(value);
    else detail.textContent = String(value);
    list.append(detail);
  }
  return list;
}

function when(iso) {
  return new Date(iso).toLocaleString();
}

function say(text) {
  status.textContent = text;
}

/** The result's own object (structuredContent), or its JSON text for hosts that only pass content. */
function resultObject(result) {
  if (result.structuredContent) return result.structuredContent;
  const text = (result.content || []).find((part) => part.type === 'text');
  try {
    return text ? JSON.parse(text.text) : {};
  } catch {
    return {};
  }
}

function show(result) {
  view.replaceChildren();
  const value = resultObject(result);
  if (result.isError) return say(value.error ? value.error.message : 'The tool answered an error.');
  const context = (result._meta && result._meta['atrium/app']) || {};
  const draw = { approval: drawApprovals, timeline: drawTimeline, tasks: drawTasks }[document.body.dataset.app];
  draw(value, context);
}

// Spec "Container Dimensions": the view reports its size whenever it changes, so the host can fit the frame to it.
new ResizeObserver(() => {
  notify('ui/notifications/size-changed', { width: document.documentElement.scrollWidth, height: document.documentElement.scrollHeight });
}).observe(document.documentElement);

function drawApprovals(value, context) {
  const decisions = value.decisions || context.decisions || [];
  if (decisions.length === 0) {
    return say(value.status ? `The action is ${value.status}: nothing waits for a decision.` : 'No decision is waiting.');
  }
  say(decisions.length === 1 ? 'One action waits for a decision.' : `${decisions.length} actions wait for a decision.`);
  for (const decision of decisions) view.append(approvalCard(decision, context));
}

function approvalCard(decision, context) {
  const cost = (context.costs || {})[decision.id];
  const card = element('article', undefined, { 'aria-labelledby': `d-${decision.id}` });
  card.append(element('h2', decision.action.capability_name, { id: `d-${decision.id}` }));
  const reasons = element('ul');
  for (const reason of decision.reasons) reasons.append(element('li', reason));
  card.append(
    facts([
      ['Capability', decision.action.capability_key],
      ['Agent', decision.agent.name],
      ['Risk', decision.risk],
      ['Cost', cost === undefined ? undefined : `${cost} budget units`],
      ['Status', decision.status],
      ['Why it waits', reasons],
      ['Expires', when(decision.expires_at)],
    ]),
  );
  card.append(element('h3', 'Exact arguments'));
  card.append(element('pre', JSON.stringify(decision.action.input, null, 2)));
  if (decision.status !== 'pending') return card;
  const page = `${context.decision_page}${encodeURIComponent(decision.id)}`;
  const outcome = element('p', undefined, { role: 'status' });
  const actions = element('div', undefined, { class: 'actions' });
  if (context.in_app_decisions && (context.resolvable || []).includes(decision.id)) {
    for (const [label, choice] of [['Approve', 'approve'], ['Deny', 'deny']]) {
      const button = element('button', label, { type: 'button', class: choice });
      button.addEventListener('click', () => resolveInApp(decision, choice, page, outcome, actions));
      actions.append(button);
    }
  } else {
    const button = element('button', 'Approve or deny on the decision page', { type: 'button', class: 'approve' });
    button.addEventListener('click', () => openPage(page, outcome));
    actions.append(button);
    card.append(element('p', 'You decide in your own browser session, on the organization’s decision page.'));
  }
  card.append(actions, outcome);
  return card;
}

async function openPage(page, outcome) {
  try {
    await request('ui/open-link', { url: page });
    outcome.textContent = 'The decision page is open in your browser.';
  } catch {
    outcome.textContent = `Open ${page} to decide.`;
  }
}

async function resolveInApp(decision, choice, page, outcome, actions) {
  for (const button of actions.querySelectorAll('button')) button.disabled = true;
  try {
    const result = await request('tools/call', { name: 'resolve_decision', arguments: { decision_id: decision.id, outcome: choice } });
    const value = resultObject(result);
    if (result.isError) throw new Error(value.error ? value.error.message : 'refused');
    const handedOver = value.decision && value.decision.status === 'pending';
    outcome.textContent = handedOver ? 'The organization asks you to decide on the decision page.' : `Decision ${value.decision.status}.`;
    if (handedOver) await openPage(page, outcome);
  } catch (error) {
    // Refused (the organization may want this decided in the person's browser): the page is always the way.
    const elicited = error.code === -32042 && error.data && error.data.elicitations && error.data.elicitations[0];
    outcome.textContent = `Not resolved here: ${error.message}`;
    const button = element('button', 'Decide on the decision page', { type: 'button', class: 'approve' });
    button.addEventListener('click', () => openPage(elicited ? elicited.url : page, outcome));
    actions.replaceChildren(button);
  }
}

function drawTimeline(operation, context) {
  say(`Operation ${operation.status}.`);
  view.append(
    facts([
      ['Operation', operation.operation_id],
      ['Kind', operation.kind],
      ['Status', operation.status],
      ['Started', when(operation.created_at)],
      ['Last change', when(operation.updated_at)],
      ['Error', operation.error ? operation.error.message : undefined],
    ]),
  );
  view.append(element('h2', 'Timeline'));
  const steps = element('ol', undefined, { class: 'timeline' });
  for (const event of operation.progress || []) {
    const step = element('li');
    step.append(element('time', when(event.at), { datetime: event.at }), document.createTextNode(' '), element('span', event.message));
    steps.append(step);
  }
  view.append(steps.children.length ? steps : element('p', 'Nothing recorded yet.'));
  for (const decision of context.decisions || []) view.append(approvalCard(decision, context));
}

const TASK_COLUMNS = [
  ['open', 'Open'],
  ['in_progress', 'In progress'],
  ['waiting', 'Waiting for an answer'],
  ['done', 'Done'],
  ['cancelled', 'Cancelled'],
];

function drawTasks(page) {
  const tasks = page.tasks || [];
  say(tasks.length === 1 ? 'One task.' : `${tasks.length} tasks${page.next_cursor ? ' on this page' : ''}.`);
  const board = element('div', undefined, { class: 'board' });
  for (const [status, label] of TASK_COLUMNS) {
    const inColumn = tasks.filter((task) => task.status === status);
    const column = element('section', undefined, { 'aria-labelledby': `c-${status}` });
    column.append(element('h2', `${label} (${inColumn.length})`, { id: `c-${status}` }));
    const list = element('ul');
    for (const task of inColumn) {
      const item = element('li');
      item.append(element('strong', task.title));
      if (task.description) item.append(element('p', task.description));
      list.append(item);
    }
    column.append(list.children.length ? list : element('p', 'None.'));
    board.append(column);
  }
  view.append(board);
}

request('ui/initialize', { appInfo: { name: 'atrium-org', version: '1.0.0' }, appCapabilities: {}, protocolVersion: '2026-01-26' })
  .then(() => notify('ui/notifications/initialized', {}))
  .catch((error) => say(`The host did not start this view: ${error.message}`));
