/** Where each catalogued fault point lives in LangGraph.js, or why it has no equivalent there. */
import { FAULT_POINTS } from '../../harness/cells.js';
export { EFFECT_NODES, initialState, invalidStateInput, RefundInputSchema, RefundStateSchema } from '../../harness/workflow.js';
export type { RefundState } from '../../harness/workflow.js';

type Support = { supported: true; where: string } | { supported: false; reason: string };

function supportOf(point: string): Support {
  const [place, rest = ''] = point.split(':');
  const [kind = '', node = ''] = rest.split('@');
  const when = place === 'before-commit' ? 'before' : 'after';
  if (place === 'inside-pure') return { supported: true, where: `inside the ${rest} node's body` };
  if (place?.startsWith('in-handler')) return { supported: true, where: `inside the ${rest} node, around the sink call` };
  switch (kind) {
    case 'RUN_STARTED':
      return { supported: true, where: `${when} SqliteSaver.put of the input checkpoint (metadata.source "input")` };
    case 'NODE_COMPLETED':
      return { supported: true, where: `${when} SqliteSaver.put of the checkpoint after ${node} (metadata.source "loop")` };
    case 'EFFECT_INTENT':
      return { supported: false, reason: 'LangGraph persists nothing before a node runs: there is no effect-intent record' };
    case 'EFFECT_DONE':
      return { supported: true, where: `${when} SqliteSaver.putWrites of the ${node} task's writes (its result, saved before the step's checkpoint)` };
    case 'INTERRUPT_PARKED':
      return { supported: true, where: `${when} SqliteSaver.putWrites of the __interrupt__ write` };
    case 'RESUME_CLAIMED':
      return { supported: true, where: `${when} SqliteSaver.putWrites of the __resume__ write that Command({resume}) makes` };
    case 'RUN_COMPLETED':
      return { supported: false, reason: 'LangGraph writes no completion record: the checkpoint after the last node is the end' };
    case 'FORKED':
      return { supported: true, where: `${when} SqliteSaver.put of the checkpoint updateState writes on the older checkpoint` };
    default:
      return { supported: false, reason: `no LangGraph equivalent for ${point}` };
  }
}

export const FAULT_POINTS_LANGGRAPH: Record<string, Support> = Object.fromEntries(
  FAULT_POINTS.map((p) => [p.name, supportOf(p.name)]),
);
