/**
 * The browser side of the test host (app-host.ts), bundled by esbuild for Chromium: the MCP Apps extension's own
 * host library (`AppBridge` over `PostMessageTransport`) renders one app resource in a sandboxed iframe, hands it
 * the tool's input and result, and passes its requests on to the test — `ui/open-link` is recorded,
 * `tools/call` goes to the real org server through the official SDK client in the test process.
 */
import type { CallToolResult } from '@modelcontextprotocol/client';
import { AppBridge, PostMessageTransport } from '@modelcontextprotocol/ext-apps/app-bridge';

interface HostWindow {
  renderApp(html: string, toolInput: Record<string, unknown>, toolResult: CallToolResult): Promise<void>;
  /** Exposed by the test (page.exposeFunction). */
  hostOpenLink(url: string): Promise<void>;
  hostCallTool(params: { name: string; arguments?: Record<string, unknown> }): Promise<CallToolResult>;
}

const host = window as unknown as HostWindow;

host.renderApp = async (html, toolInput, toolResult) => {
  const iframe = document.createElement('iframe');
  // Spec "Security Implications": sandboxed; without allow-same-origin the view has an opaque origin of its own.
  iframe.setAttribute('sandbox', 'allow-scripts');
  iframe.title = 'Atrium app';
  iframe.srcdoc = html;
  document.querySelector('main')!.append(iframe);

  const bridge = new AppBridge(null, { name: 'atrium-test-host', version: '1.0.0' }, { openLinks: {}, serverTools: {} });
  bridge.onopenlink = async ({ url }) => {
    await host.hostOpenLink(url);
    return {};
  };
  bridge.oncalltool = (params) => host.hostCallTool(params);
  bridge.onsizechange = ({ height }) => {
    if (height !== undefined) iframe.style.height = `${height}px`;
  };
  const initialized = new Promise<void>((resolve) => (bridge.oninitialized = () => resolve()));
  await bridge.connect(new PostMessageTransport(iframe.contentWindow!, iframe.contentWindow!));
  await initialized;
  await bridge.sendToolInput({ arguments: toolInput });
  await bridge.sendToolResult(toolResult);
};
