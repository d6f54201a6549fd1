/**
 * What a benchmark ran on, recorded next to its figures: numbers from a 2-core machine shared with other
 * work mean something different from numbers on a quiet 16-core one.
 */
import os from 'node:os';

export interface MachineInfo {
  cpus: number;
  cpuModel: string;
  ramGiB: number;
  node: string;
  platform: string;
  /** 1-minute load average when the run started: a busy machine shows here. */
  loadAverage: number;
  date: string;
}

export function machineInfo(): MachineInfo {
  return {
    cpus: os.availableParallelism(),
    cpuModel: os.cpus()[0]?.model.trim() ?? 'unknown',
    ramGiB: Math.round((os.totalmem() / 1024 ** 3) * 10) / 10,
    node: process.version,
    platform: `${os.type()} ${os.release()} ${os.arch()}`,
    loadAverage: Math.round(os.loadavg()[0] * 100) / 100,
    date: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
  };
}

export function describeMachine(info: MachineInfo): string {
  return [
    `${info.cpus} cores (nproc), ${info.cpuModel}, ${info.ramGiB} GiB RAM`,
    `Node ${info.node}, ${info.platform}`,
    `${info.date}, load average at start ${info.loadAverage}`,
  ].join('; ');
}
