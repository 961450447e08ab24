import { StateGraph, Annotation, START, END, interrupt, Command } from '@langchain/langgraph';
import { SqliteSaver } from '@langchain/langgraph-checkpoint-sqlite';
import fs from 'node:fs';
class LoggingSaver extends SqliteSaver {
  override async put(config: any, checkpoint: any, metadata: any) {
    console.log('PUT', config.configurable?.checkpoint_id, '->', checkpoint.id, JSON.stringify(metadata), JSON.stringify(checkpoint.channel_values));
    return super.put(config, checkpoint, metadata);
  }
  override async putWrites(config: any, writes: any, taskId: string) {
    console.log('PUTWRITES', config.configurable?.checkpoint_id, taskId, JSON.stringify(writes));
    return super.putWrites(config, writes, taskId);
  }
}
const State = Annotation.Root({
  amountCents: Annotation<number>(),
  refundCents: Annotation<number | undefined>(),
  decision: Annotation<any>(),
  visited: Annotation<string[]>(),
});
let n = 0;
const g = new StateGraph(State)
  .addNode('compute', (s, config: any) => { console.log('compute body', Object.keys(config.configurable ?? {}), config.configurable?.checkpoint_id, config.metadata?.langgraph_step, JSON.stringify(config.metadata)); return { refundCents: s.amountCents, visited: [...s.visited, 'compute'] }; })
  .addNode('charge', (s, config: any) => { console.log('charge body', config.configurable?.checkpoint_id, config.metadata?.langgraph_checkpoint_ns, config.metadata?.langgraph_task_id ); return { visited: [...s.visited, 'charge'] }; })
  .addNode('approval', (s) => { console.log('approval body before interrupt'); const v = interrupt({ ask: 'approve?' }); console.log('approval got', v); return { decision: v, visited: [...s.visited, 'approval'] }; })
  .addNode('notify', (s) => { console.log('notify body'); return { visited: [...s.visited, 'notify'] }; })
  .addEdge(START, 'compute').addEdge('compute', 'charge').addEdge('charge', 'approval').addEdge('approval', 'notify').addEdge('notify', END);
try { fs.unlinkSync('/tmp/lg.db'); } catch {}
const saver = new LoggingSaver(new (await import('better-sqlite3')).default('/tmp/lg.db'));
const app = g.compile({ checkpointer: saver });
const cfg = { configurable: { thread_id: 't1' }, durability: 'sync' as const };
const r1 = await app.invoke({ amountCents: 500, visited: [] }, cfg);
console.log('R1', JSON.stringify(r1));
const st = await app.getState({ configurable: { thread_id: 't1' } });
console.log('STATE next', st.next, JSON.stringify(st.tasks));
const r2 = await app.invoke(new Command({ resume: { approved: true } }), cfg);
console.log('R2', JSON.stringify(r2));
const r3 = await app.invoke(new Command({ resume: { approved: false } }), cfg);
console.log('R3', JSON.stringify(r3));
for await (const h of app.getStateHistory({ configurable: { thread_id: 't1' } })) console.log('HIST', h.config.configurable?.checkpoint_id, h.next, JSON.stringify(h.values), JSON.stringify(h.metadata));
