// JSON that keeps Map and bigint values (the model's PYFRAMES tables hold Maps), for the few nested values
// the dataset stores as text rather than as columns of their own.

export function toTaggedJson(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) => {
    if (v instanceof Map) return { $map: [...v.entries()] };
    if (typeof v === 'bigint') return { $bigint: v.toString() };
    return v;
  });
}

export function fromTaggedJson<T>(text: string): T {
  return JSON.parse(text, (_k, v: unknown) => {
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
      const o = v as Record<string, unknown>;
      if (Array.isArray(o.$map) && Object.keys(o).length === 1) return new Map(o.$map as [unknown, unknown][]);
      if (typeof o.$bigint === 'string' && Object.keys(o).length === 1) return BigInt(o.$bigint);
    }
    return v;
  }) as T;
}
