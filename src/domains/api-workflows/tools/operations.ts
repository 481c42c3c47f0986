/** Inventory and shipping tools. */
import { z } from 'zod';
import { serve } from '../service.js';
import { getRecord, insertRecord, listRecords, listWhere, putRecord } from '../state.js';
import { isoDay } from '../world.js';
import { consistentArg, cursorArg, id, isoDate, keyArg, notFound, ok, page, pageSizeArg, refused } from './common.js';

export const operationsTools = [
  serve({
    name: 'get_stock',
    service: 'inventory',
    effect: 'read',
    description: 'Stock of one product by sku (sku_XXXX): name, stock, warehouse, price_cents.',
    args: z.strictObject({ sku: id('sku'), consistent: consistentArg }),
    run(state, args, call) {
      const p = call.read('products', args.sku, args.consistent);
      return p === undefined ? notFound('product', args.sku) : ok(p);
    },
  }),
  serve({
    name: 'list_products',
    service: 'inventory',
    effect: 'read',
    description: 'Products filtered by warehouse and/or stock below a threshold. Paginated.',
    args: z.strictObject({ warehouse: z.enum(['north', 'south', 'east']).optional(), stock_below: z.number().int().min(0).optional(), cursor: cursorArg, page_size: pageSizeArg }),
    run(state, args) {
      return page(listRecords(state, 'products').filter((p) => (args.warehouse === undefined || p.warehouse === args.warehouse) && (args.stock_below === undefined || Number(p.stock) < args.stock_below)), args.cursor, args.page_size);
    },
  }),
  serve({
    name: 'adjust_stock',
    service: 'inventory',
    effect: 'write',
    description: 'Add (positive delta) or remove (negative) stock of a product, with a reason.',
    args: z.strictObject({ sku: id('sku'), delta: z.number().int().min(-1000).max(1000), reason: z.string().min(1).max(120), idempotency_key: keyArg }),
    targets: (a) => [`products/${a.sku}`],
    run(state, args) {
      const p = getRecord(state, 'products', args.sku);
      if (p === undefined) return notFound('product', args.sku);
      const stock = Number(p.stock) + args.delta;
      if (stock < 0) return refused(`stock of ${p.id} would go negative (${p.stock} ${args.delta})`);
      const next = { ...p, stock };
      putRecord(state, 'products', next);
      return ok(next);
    },
  }),
  serve({
    name: 'get_shipment',
    service: 'shipping',
    effect: 'read',
    description: 'One shipment by id (shp_XXXX): customer_id, sku, quantity, status, carrier, eta (ISO date).',
    args: z.strictObject({ shipment_id: id('shp'), consistent: consistentArg }),
    run(state, args, call) {
      const s = call.read('shipments', args.shipment_id, args.consistent);
      return s === undefined ? notFound('shipment', args.shipment_id) : ok(s);
    },
  }),
  serve({
    name: 'list_shipments',
    service: 'shipping',
    effect: 'read',
    description: 'Shipments filtered by customer_id and/or status (label_created|in_transit|delayed|delivered|cancelled). Paginated.',
    args: z.strictObject({ customer_id: id('cus').optional(), status: z.enum(['label_created', 'in_transit', 'delayed', 'delivered', 'cancelled']).optional(), cursor: cursorArg, page_size: pageSizeArg }),
    run(state, args) {
      return page((args.customer_id !== undefined ? listWhere(state, 'shipments', 'customer_id', args.customer_id) : listRecords(state, 'shipments')).filter((s) => (args.customer_id === undefined || s.customer_id === args.customer_id) && (args.status === undefined || s.status === args.status)), args.cursor, args.page_size);
    },
  }),
  serve({
    name: 'create_shipment',
    service: 'shipping',
    effect: 'write',
    description: 'Ship quantity units of a sku to a customer; takes them out of stock (refused when stock is short).',
    args: z.strictObject({ customer_id: id('cus'), sku: id('sku'), quantity: z.number().int().min(1).max(20), idempotency_key: keyArg }),
    targets: (a) => [`products/${a.sku}`],
    run(state, args) {
      if (getRecord(state, 'customers', args.customer_id) === undefined) return notFound('customer', args.customer_id);
      const p = getRecord(state, 'products', args.sku);
      if (p === undefined) return notFound('product', args.sku);
      if (Number(p.stock) < args.quantity) return refused(`only ${p.stock} of ${p.id} in stock`);
      putRecord(state, 'products', { ...p, stock: Number(p.stock) - args.quantity });
      return ok(insertRecord(state, 'shipments', { customer_id: args.customer_id, sku: args.sku, quantity: args.quantity, status: 'label_created', carrier: 'dhl', eta: isoDay(5) }));
    },
  }),
  serve({
    name: 'update_shipment',
    service: 'shipping',
    effect: 'write',
    description: 'Change a shipment\'s status (e.g. cancelled) or eta (ISO date). Delivered shipments cannot change.',
    args: z.strictObject({ shipment_id: id('shp'), status: z.enum(['label_created', 'in_transit', 'delayed', 'delivered', 'cancelled']).optional(), eta: isoDate.optional(), idempotency_key: keyArg }),
    targets: (a) => [`shipments/${a.shipment_id}`],
    run(state, args) {
      const s = getRecord(state, 'shipments', args.shipment_id);
      if (s === undefined) return notFound('shipment', args.shipment_id);
      if (s.status === 'delivered') return refused(`shipment ${s.id} is delivered`);
      const next = { ...s, ...(args.status ? { status: args.status } : {}), ...(args.eta ? { eta: args.eta } : {}) };
      putRecord(state, 'shipments', next);
      return ok(next);
    },
  }),
];
