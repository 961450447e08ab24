import { readCorpus } from '../corpus.js';
import { reference } from '../../ts-shell/src/core/reference-core.js';
import { LogErrorName } from '../../ts-shell/src/core/codec.js';
for (const e of readCorpus()) {
  const r = reference.recover(e.log);
  console.log(e.name.padEnd(48), r.ok ? `ok status=${r.status} action=${r.action.tag} rc=${r.recordCount} torn=${r.tornLen} ckpt=${r.checkpointSeq} snap=${r.snapshotSeq}` : `ERR ${LogErrorName[r.code]} seq=${r.seq} kind=${r.kind}`);
}
