// Public entry of the simulated Talos half of the twin.
export { TalosSim } from './sim.js';
export type { TalosSimOptions } from './sim.js';
export type {
  AddNodeSpec,
  AuthFields,
  CommandRecord,
  ContainerdState,
  EtcdState,
  FailAction,
  FailMatch,
  ServiceEvent,
  SimEtcdMember,
  SimFile,
  SimTalosNode,
  TalosVersion,
} from './types.js';
