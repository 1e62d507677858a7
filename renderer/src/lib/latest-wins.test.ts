import { describe, expect, it } from 'vitest';
import { latestWins } from './latest-wins.ts';

const later = <T>(v: T, ms: number): Promise<T> => new Promise((r) => setTimeout(() => r(v), ms));

describe('latestWins', () => {
  it('applies only the latest ask, whatever order the answers come in', async () => {
    const gate = latestWins();
    const applied: string[] = [];
    const a = gate.ask(later('old', 30), (r) => applied.push(r));
    const b = gate.ask(later('new', 5), (r) => applied.push(r));
    await Promise.all([a, b]);
    expect(applied).toEqual(['new']);
  });

  it('applies nothing after drop, and passes a failure on', async () => {
    const gate = latestWins();
    const applied: string[] = [];
    const a = gate.ask(later('x', 5), (r) => applied.push(r));
    gate.drop();
    await a;
    expect(applied).toEqual([]);
    await expect(gate.ask(Promise.reject(new Error('engine gone')), () => undefined)).rejects.toThrow('engine gone');
  });
});
