// The names the twin records calls under and matches faults by: each talosctl command the twin runs and
// its implementation, the Talos API methods under the talosctl command names (so one `failNext` rule
// covers both paths), which calls mutate a machine, and the gRPC codes an injected error names.
import type { Command, RunRequest } from './commands/context.js';
import { etcdAlarmListCommand, etcdMembersCommand, etcdRemoveMemberCommand, etcdStatusCommand } from './commands/etcd.js';
import { getCommand } from './commands/get.js';
import { imagePullCommand, imageRemoveCommand } from './commands/image.js';
import { lsCommand } from './commands/ls.js';
import { patchCommand } from './commands/patch.js';
import { readCommand } from './commands/read.js';
import { rebootCommand } from './commands/reboot.js';
import { serviceCommand } from './commands/service.js';
import { versionCommand } from './commands/version.js';

/** The MachineService / COSI methods under the talosctl command names that `failNext` matches. */
export const APPLY_CONFIGURATION = '/machine.MachineService/ApplyConfiguration';

export const API_COMMANDS: Record<string, string> = {
  '/machine.MachineService/Version': 'version',
  '/machine.MachineService/ServiceList': 'service',
  '/machine.MachineService/List': 'ls',
  '/machine.MachineService/Read': 'read',
  '/machine.MachineService/EtcdStatus': 'etcd status',
  '/machine.MachineService/EtcdAlarmList': 'etcd alarm list',
  '/machine.MachineService/EtcdMemberList': 'etcd members',
  '/cosi.resource.State/Get': 'get',
  // the same fault rules as `talosctl patch machineconfig`, which sends this call
  '/machine.MachineService/ApplyConfiguration': 'patch machineconfig',
  '/machine.MachineService/Reboot': 'reboot',
};

/** the API methods that change a machine (listed by mutatingCommands) */
export const API_MUTATIONS = new Set(['/machine.MachineService/Reboot', '/machine.MachineService/ApplyConfiguration']);

export const GRPC_CODES: Record<string, number> = {
  Canceled: 1,
  Unknown: 2,
  InvalidArgument: 3,
  DeadlineExceeded: 4,
  NotFound: 5,
  AlreadyExists: 6,
  PermissionDenied: 7,
  ResourceExhausted: 8,
  FailedPrecondition: 9,
  Aborted: 10,
  OutOfRange: 11,
  Unimplemented: 12,
  Internal: 13,
  Unavailable: 14,
  DataLoss: 15,
  Unauthenticated: 16,
};

export const COMMANDS: Record<string, Command> = {
  service: serviceCommand,
  ls: lsCommand,
  read: readCommand,
  get: getCommand,
  patch: patchCommand,
  reboot: rebootCommand,
  'etcd-status': etcdStatusCommand,
  'etcd-alarm-list': etcdAlarmListCommand,
  'etcd-members': etcdMembersCommand,
  'etcd-remove-member': etcdRemoveMemberCommand,
  'image-pull': imagePullCommand,
  'image-remove': imageRemoveCommand,
  version: versionCommand,
};

/** `talosctl list` is recorded under its alias `ls`, the name everyone uses. */
export function names(commandPath: string): { command: string; path: string } {
  const words = commandPath.split(' ').slice(1);
  if (words[0] === 'list') words[0] = 'ls';
  return { command: words[0] ?? '', path: words.join(' ') };
}

export function isMutating(req: RunRequest): boolean {
  switch (req.command) {
    case 'patch':
      return !req.flags['dry-run'];
    case 'reboot':
    case 'image-pull':
    case 'image-remove':
    case 'etcd-remove-member':
      return true;
    case 'service':
      return ['start', 'stop', 'restart'].includes(req.args[1] ?? '');
    default:
      return false;
  }
}
