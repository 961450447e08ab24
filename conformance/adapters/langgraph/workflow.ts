/**
 * The reference workflow written the way a LangGraph.js user writes it: a StateGraph over a zod
 * state schema, effects inside nodes, the approval through `interrupt()`. Fault hooks sit where
 * LangGraph lets a user put them: inside node bodies and effect handlers.
 */
import { StateGraph, START, END, interrupt, type LangGraphRunnableConfig } from '@langchain/langgraph';
import type { BaseCheckpointSaver } from '@langchain/langgraph-checkpoint';
import {
  ApprovalValueSchema,
  RefundStateSchema,
  chargeResult,
  notifyResult,
  refundFor,
  type RefundState,
} from '../../harness/workflow.js';
import type { EffectSinkWriter } from '../../harness/sink.js';
import type { FaultSwitch } from '../common/serve.js';

export class ApprovalValueError extends Error {
  constructor(readonly field: string, detail: string) {
    super(`resume value invalid in field "${field}": ${detail}`);
    this.name = 'ApprovalValueError';
  }
}

export interface WorkflowDeps {
  sink: () => EffectSinkWriter;
  faults: FaultSwitch;
}

function threadOf(config: LangGraphRunnableConfig): string {
  const thread = config.configurable?.thread_id;
  if (typeof thread !== 'string') throw new Error('node called without a thread_id');
  return thread;
}

/**
 * The idempotency key of one node execution: thread plus LangGraph's task namespace
 * ("node:<task id>"). The task id is derived from the checkpoint the task runs from, so a retry
 * from the same checkpoint reuses the key and a time-travel or fork gets a new one.
 */
function effectKey(config: LangGraphRunnableConfig, node: string): string {
  const ns = config.metadata?.langgraph_checkpoint_ns ?? config.configurable?.checkpoint_ns;
  if (typeof ns !== 'string' || ns.length === 0) throw new Error(`no task namespace for ${node}`);
  return `${threadOf(config)}/${ns}`;
}

function runEffect(deps: WorkflowDeps, config: LangGraphRunnableConfig, node: string): void {
  const key = effectKey(config, node);
  const run = threadOf(config);
  deps.sink().invoke(node, key, run);
  deps.faults.hit(`in-handler-before-effect:${node}`);
  deps.sink().apply(node, key, run);
  deps.faults.hit(`in-handler-after-effect:${node}`);
}

/** `notifyNode` is the last node's name; the definition-change probe renames it. */
export function buildGraph(deps: WorkflowDeps, checkpointer: BaseCheckpointSaver, notifyNode = 'notify') {
  const graph = new StateGraph(RefundStateSchema)
    .addNode('compute', (s: RefundState, config: LangGraphRunnableConfig) => {
      deps.sink().pure('compute', threadOf(config));
      deps.faults.hit('inside-pure:compute');
      return { refundCents: refundFor(s.amountCents), visited: [...s.visited, 'compute'] };
    })
    .addNode('charge', (s: RefundState, config: LangGraphRunnableConfig) => {
      runEffect(deps, config, 'charge');
      return { chargeId: chargeResult(s.orderId, s.refundCents ?? -1), visited: [...s.visited, 'charge'] };
    })
    .addNode('approval', (s: RefundState) => {
      const raw: unknown = interrupt({ question: `refund ${s.refundCents} cents for ${s.orderId}?` });
      const parsed = ApprovalValueSchema.safeParse(raw);
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        throw new ApprovalValueError(String(issue?.path[0] ?? '(value)'), issue?.message ?? 'invalid');
      }
      return { decision: parsed.data, visited: [...s.visited, 'approval'] };
    })
    .addNode(notifyNode, (s: RefundState, config: LangGraphRunnableConfig) => {
      runEffect(deps, config, notifyNode);
      return {
        notificationId: notifyResult(s.orderId, s.decision?.approved ?? false),
        visited: [...s.visited, 'notify'],
      };
    })
    .addEdge(START, 'compute')
    .addEdge('compute', 'charge')
    .addEdge('charge', 'approval')
    .addEdge('approval', notifyNode as 'notify')
    .addEdge(notifyNode as 'notify', END);
  return graph.compile({ checkpointer });
}
