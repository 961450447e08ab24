import { describe, expect, it } from 'vitest';
import { renderInspection, table, type RunInspection } from './inspect.js';

// More rows than a call takes arguments (a spread of every row into Math.max or push overflowed
// the stack from about 123,000 rows: `remit runs` on a large store, `remit inspect` on a long run).
const MANY = 200_000;

describe('table() and renderInspection() on many rows', () => {
  it('table() lays out 200,000 rows, widths from the widest cell of each column', () => {
    const rows = Array.from({ length: MANY }, (_, i) => [String(i), i === 123_456 ? 'widest-cell' : 'x']);
    const lines = table(['n', 'v'], rows, [true]);
    expect(lines).toHaveLength(MANY + 1);
    expect(lines[0]).toBe('     n  v');
    expect(lines[1]).toBe('     0  x');
    expect(lines[123_457]).toBe('123456  widest-cell');
  });

  it('renderInspection() renders a run of 200,000 records', () => {
    const records = Array.from({ length: MANY }, (_, seq) => ({ seq, kind: 'STEP_COMPLETED', node: 'step', committedAt: '2024-01-01T00:00:00.000Z', bytes: 40 }));
    const inspection = {
      runId: 'long-run', workflow: 'w', version: '1', fingerprint: null, status: 'completed', nextAction: 'DONE', headSeq: MANY - 1,
      records, effects: [], interruptsParked: 0, interruptsClaimed: 0, lineage: [],
      totals: { records: MANY, bytes: MANY * 40, stateBytes: 0 },
    } as unknown as RunInspection;
    const text = renderInspection(inspection);
    const lines = text.split('\n');
    expect(lines[0]).toBe('run long-run  workflow w v1  status completed  next DONE');
    expect(lines[1]).toMatch(/^   seq  kind/);
    expect(lines[2 + MANY - 1]).toMatch(/^199999  STEP_COMPLETED  step/);
    expect(lines[2 + MANY]).toBe('200000 records, 8000000 bytes (0 of state)');
  });
});
