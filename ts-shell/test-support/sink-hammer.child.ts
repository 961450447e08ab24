/**
 * Child of testing/effect-sink.test.ts: applies effects to a FileEffectSink in a loop until it is
 * SIGKILLed, each key twice (the second is the retry of a key already applied), and says on
 * stdout once it has started. Usage: sink-hammer.child.ts <sink dir> <round>
 */
import { FileEffectSink } from '../src/testing/effect-sink.js';

const [dir, round] = process.argv.slice(2);
if (dir === undefined || round === undefined) throw new Error('usage: sink-hammer.child.ts <sink dir> <round>');
const sink = new FileEffectSink(dir);
for (let i = 0; ; i++) {
  const key = `round-${round}/key-${i}`;
  await sink.apply('charge', key, { i, filler: 'x'.repeat(4096) });
  await sink.apply('charge', key, { i });
  if (i === 0) process.stdout.write('applying\n');
}
