// The copy-on-write store: writes make new stores, the base is shared, and the hash follows content, not history.
import { describe, expect, it } from 'vitest';
import { createStore, exportStore, getRow, hashStore, nextId, putRow, rowsOf } from './store.js';

const base = { products: { 'P-1': { name: 'Mug', stock: 3 }, 'P-2': { name: 'Lamp', stock: 0 } } };

describe('the web store', () => {
  it('writes return a new store and leave the old one as it was', () => {
    const a = createStore(base);
    const b = putRow(a, 'products', 'P-1', { name: 'Mug', stock: 9 });
    expect(getRow(a, 'products', 'P-1')!['stock']).toBe(3);
    expect(getRow(b, 'products', 'P-1')!['stock']).toBe(9);
    expect(b.base).toBe(a.base);
    expect(b.changes.size).toBe(1);
    expect(hashStore(b)).not.toBe(hashStore(a));
  });

  it('hashes by content: a record changed back, or deleted and restored, is no change', () => {
    const a = createStore(base);
    const back = putRow(putRow(a, 'products', 'P-1', { name: 'Mug', stock: 9 }), 'products', 'P-1', { name: 'Mug', stock: 3 });
    expect(back.changes.size).toBe(0);
    expect(hashStore(back)).toBe(hashStore(a));
    const gone = putRow(a, 'products', 'P-2', null);
    expect(rowsOf(gone, 'products').map((r) => r.id)).toEqual(['P-1']);
    expect(hashStore(putRow(gone, 'products', 'P-2', { name: 'Lamp', stock: 0 }))).toBe(hashStore(a));
  });

  it('compares a write with the base value as canonical JSON does: key order, -0 and undefined fields do not count, nested values are compared whole', () => {
    const nested = { products: { 'P-1': { name: 'Mug', stock: 0, tags: ['blue', 'big'] } } };
    const a = createStore(nested);
    // The same content written in another key order, with -0 for 0 and an undefined field: no change.
    expect(putRow(a, 'products', 'P-1', { tags: ['blue', 'big'], stock: -0, name: 'Mug', note: undefined as unknown as string }).changes.size).toBe(0);
    // One field more, one field less, a nested value changed: a change each.
    expect(putRow(a, 'products', 'P-1', { name: 'Mug', stock: 0, tags: ['blue', 'big'], note: '' }).changes.size).toBe(1);
    expect(putRow(a, 'products', 'P-1', { name: 'Mug', tags: ['blue', 'big'] }).changes.size).toBe(1);
    const changed = putRow(a, 'products', 'P-1', { name: 'Mug', stock: 0, tags: ['blue', 'small'] });
    expect(changed.changes.size).toBe(1);
    expect(hashStore(changed)).not.toBe(hashStore(a));
    // A string with no canonical form (a lone surrogate) is refused by the digest, as before.
    expect(() => putRow(a, 'products', 'P-1', { name: 'Mug\ud800', stock: 0, tags: ['blue', 'big'] })).toThrow();
  });

  it('new ids follow the base and exports are sorted', () => {
    const { id, store } = nextId(createStore(base), 'products', 'P-');
    expect(id).toBe('P-1003');
    const s = putRow(store, 'products', id, { name: 'Vase', stock: 1 });
    expect(Object.keys(exportStore(s)['products'] as object)).toEqual(['P-1', 'P-1003', 'P-2']);
  });

  it('lists a table in id order after any mix of updates, inserts and deletes, as the records are now', () => {
    const big = { products: Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`P-${100 + i}`, { name: `Item ${i}`, stock: i }])), orders: { 'O-1': { total: 1 } } };
    let store = createStore(big);
    const now = new Map<string, unknown>(Object.entries(big.products));
    // A fixed sequence (no randomness): update, insert, delete, update back to base, delete an inserted record.
    const writes: Array<[string, { name: string; stock: number } | null]> = [
      ['P-103', { name: 'Item 3', stock: 99 }],
      ['P-050', { name: 'Early', stock: 1 }],
      ['P-107', null],
      ['P-999', { name: 'Late', stock: 2 }],
      ['P-103', { name: 'Item 3', stock: 3 }],
      ['P-050', null],
      ['P-101', { name: 'Renamed', stock: 1 }],
    ];
    for (const [id, row] of writes) {
      store = putRow(store, 'products', id, row);
      if (row === null) now.delete(id);
      else now.set(id, row);
      const expected = [...now.entries()].sort((a, b) => (a[0] < b[0] ? -1 : 1)).map(([i, r]) => ({ id: i, row: r }));
      expect(rowsOf(store, 'products')).toEqual(expected);
      expect(rowsOf(store, 'orders').map((r) => r.id)).toEqual(['O-1']);
    }
  });
});
