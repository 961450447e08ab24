// A worker thread's entry: registers tsx in the thread (worker threads do not inherit the
// parent's loader), then runs the TypeScript module named by workerData.module.
import { workerData } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register();
await import(workerData.module);
