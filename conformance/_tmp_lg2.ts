import { StateGraph, START, END, interrupt, Command } from '@langchain/langgraph';
import { SqliteSaver } from '@langchain/langgraph-checkpoint-sqlite';
import { z } from 'zod';
import Database from 'better-sqlite3';
import fs from 'node:fs';
const State = z.object({
  amountCents: z.number().int().min(0),
  refundCents: z.number().int().min(0).nullable(),
  visited: z.array(z.string()),
});
const g = new StateGraph(State)
  .addNode('compute', (s) => ({ refundCents: s.amountCents - 1000, visited: [...s.visited, 'compute'] }))
  .addNode('approval', (s) => { const v = interrupt({ ask: 1 }); return { visited: [...s.visited, 'approval'] }; })
  .addEdge(START, 'compute').addEdge('compute', 'approval').addEdge('approval', END);
try { fs.unlinkSync('/tmp/lg2.db'); } catch {}
const saver = new SqliteSaver(new Database('/tmp/lg2.db'));
const app = g.compile({ checkpointer: saver });
const cfg = { configurable: { thread_id: 't1' }, durability: 'sync' as const };
try { const r = await app.invoke({ amountCents: 5, refundCents: null, visited: [] }, cfg); console.log('R', JSON.stringify(r)); } catch (e: any) { console.log('ERR', e.constructor.name, e.message.slice(0, 300)); }
const st = await app.getState({ configurable: { thread_id: 't1' } });
console.log(JSON.stringify(st.values), st.next);
