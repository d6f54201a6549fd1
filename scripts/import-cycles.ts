/**
 * Import circles, type-only ones included (DESIGN.md §2: layers only point down). import-x/no-cycle skips
 * `import type`, so this walks the compiler's own view of every import (static, type-only, re-exports and dynamic
 * `import()`), resolved as tsc resolves them, and prints each circle once. Exit code 1 when there is one.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

interface Edge {
  to: string;
  line: number;
}

const root = path.resolve(import.meta.dirname, '..');
const configPath = path.join(root, 'tsconfig.json');
const config = ts.getParsedCommandLineOfConfigFile(configPath, {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} });
if (!config) throw new Error(`cannot read ${configPath}`);

const files = new Set(config.fileNames.map((file) => path.resolve(file)));
const graph = new Map<string, Edge[]>();
for (const file of files) {
  const text = readFileSync(file, 'utf8');
  const edges: Edge[] = [];
  for (const imported of ts.preProcessFile(text, true, true).importedFiles) {
    const resolved = ts.resolveModuleName(imported.fileName, file, config.options, ts.sys).resolvedModule;
    const target = resolved && path.resolve(resolved.resolvedFileName);
    if (target && files.has(target)) {
      edges.push({ to: target, line: text.slice(0, imported.pos).split('\n').length });
    }
  }
  graph.set(file, edges);
}

const circles = stronglyConnected(graph).filter(
  (component) => component.length > 1 || graph.get(component[0])!.some((edge) => edge.to === component[0]),
);
for (const component of circles) {
  const members = new Set(component);
  const start = [...component].sort()[0];
  const names = component.map((file) => path.relative(root, file)).sort();
  console.error(`import circle among ${names.join(', ')}; the shortest:`);
  for (const [from, edge] of shortestCircle(start, members)) {
    console.error(`  ${path.relative(root, from)}:${edge.line} imports ${path.relative(root, edge.to)}`);
  }
}
if (circles.length > 0) process.exit(1);

/** Tarjan's algorithm, iterative so deep import chains cannot overflow the stack. */
function stronglyConnected(edges: Map<string, Edge[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const components: string[][] = [];
  let counter = 0;
  for (const root of edges.keys()) {
    if (index.has(root)) continue;
    const work: Array<{ node: string; next: number }> = [{ node: root, next: 0 }];
    index.set(root, counter);
    low.set(root, counter++);
    stack.push(root);
    onStack.add(root);
    while (work.length > 0) {
      const frame = work[work.length - 1];
      const out = edges.get(frame.node)!;
      if (frame.next < out.length) {
        const to = out[frame.next++].to;
        if (!index.has(to)) {
          index.set(to, counter);
          low.set(to, counter++);
          stack.push(to);
          onStack.add(to);
          work.push({ node: to, next: 0 });
        } else if (onStack.has(to)) {
          low.set(frame.node, Math.min(low.get(frame.node)!, index.get(to)!));
        }
        continue;
      }
      work.pop();
      if (work.length > 0) {
        const parent = work[work.length - 1].node;
        low.set(parent, Math.min(low.get(parent)!, low.get(frame.node)!));
      }
      if (low.get(frame.node) === index.get(frame.node)) {
        const component: string[] = [];
        let member: string;
        do {
          member = stack.pop()!;
          onStack.delete(member);
          component.push(member);
        } while (member !== frame.node);
        components.push(component);
      }
    }
  }
  return components;
}

/** The shortest way from `start` back to itself inside one component, as (importer, import) steps. */
function shortestCircle(start: string, members: Set<string>): Array<[string, Edge]> {
  const cameFrom = new Map<string, [string, Edge]>();
  const queue = [start];
  while (queue.length > 0) {
    const node = queue.shift()!;
    for (const edge of graph.get(node)!) {
      if (!members.has(edge.to)) continue;
      if (edge.to === start) {
        const steps: Array<[string, Edge]> = [[node, edge]];
        for (let at = node; at !== start; at = cameFrom.get(at)![0]) steps.unshift(cameFrom.get(at)!);
        return steps;
      }
      if (!cameFrom.has(edge.to)) {
        cameFrom.set(edge.to, [node, edge]);
        queue.push(edge.to);
      }
    }
  }
  return [];
}
