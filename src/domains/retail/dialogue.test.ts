import { describe, expect, it } from 'vitest';
import type { Observation } from '../../core/index.js';
import { detectIntents, RetailDialogue, sentences } from './dialogue.js';

const reset = (text: string): Observation => ({ kind: 'reset', text, budget: { steps: 30 } });

describe('retail keyword understanding', () => {
  it('hears the requests of common phrasings, in the order they are mentioned', () => {
    expect(detectIntents("I'd like to cancel order #W1234567.")).toEqual(['cancel']);
    expect(detectIntents("What's the status of order #W1234567?")).toEqual(['status']);
    expect(detectIntents('I want to return some items from order #W1234567.')).toEqual(['return']);
    expect(detectIntents('Can I exchange an item from order #W1234567?')).toEqual(['exchange']);
    expect(detectIntents('I need to change the shipping address of order #W1234567.')).toEqual(['order_address']);
    expect(detectIntents('I moved and need to update the address on my account.')).toEqual(['user_address']);
    expect(detectIntents('Can you change the payment method on order #W1234567?')).toEqual(['payment']);
    expect(detectIntents("I'd like to speak to a real person, please.")).toEqual(['out_of_scope']);
    expect(detectIntents("And can you look at my partner's order #W7654321 too?")).toEqual(['other_customer']);
    expect(detectIntents('Before you change my address, can you check whether my last order has shipped?')).toEqual(['user_address', 'status']);
  });

  it('does not hear a payment change in where a refund or a price difference should go', () => {
    expect(detectIntents('The refund should go to the original payment method.')).toEqual([]);
    expect(detectIntents('Any price difference can go on my visa card ending in 1234.')).toEqual([]);
    expect(detectIntents('Can you change the payment method on order #W1234567?')).toEqual(['payment']);
  });

  it('misses typos and paraphrases it has no keyword for (the honest weak spot)', () => {
    expect(detectIntents('i want to canecl an order')).toEqual([]);
    expect(detectIntents("I don't want #W1234567 anymore. Can you call it off?")).toEqual([]);
    expect(detectIntents("I'd rather settle one of my purchases another way.")).toEqual([]);
  });

  it('splits sentences but keeps "St. Louis" in one piece', () => {
    expect(sentences('My new address is 8 Ash Court, St. Louis, MO 63187, USA. Thanks!')).toEqual(['My new address is 8 Ash Court, St. Louis, MO 63187, USA.', 'Thanks!']);
  });

  it('reads identity, address, reason and payment method from what the customer says', () => {
    const d = new RetailDialogue(reset("Hi! I'm Rosa Sharma, zip code 89177. I'd like to cancel order #W1234567. The reason is: ordered by mistake."));
    expect([d.firstName, d.lastName, d.zip, d.reason]).toEqual(['Rosa', 'Sharma', '89177', 'ordered by mistake']);
    expect(d.requests.map((r) => [r.kind, r.orderId])).toEqual([['cancel', '#W1234567']]);
    d.hear('um, my new address is 8 Ash Court, Suite 4, St. Louis, MO 63187, USA. please use my visa card ending in 1234');
    expect(d.address).toEqual({ address1: '8 Ash Court', address2: 'Suite 4', city: 'St. Louis', state: 'MO', zip: '63187', country: 'USA' });
    expect(d.requests).toHaveLength(1);
  });

  it('fills a proposal and the write from slots, and only after authentication', () => {
    const d = new RetailDialogue(reset("Hello. My email is sara@example.com. I'd like to cancel order #W1234567. Reason: no longer needed."));
    expect(d.propose()).toBeUndefined();
    expect(d.findByEmail()).toEqual({ type: 'tool', tool: 'find_user_id_by_email', args: { email: 'sara@example.com' } });
    d.afterStep(d.findByEmail()!, { kind: 'tool', output: 'sara_doe_1' });
    expect(d.need()).toBe('fetch');
    const order = { order_id: '#W1234567', user_id: 'sara_doe_1', status: 'pending', items: [], payment_history: [{ payment_method_id: 'paypal_1' }] };
    d.afterStep(d.getOrder()!, { kind: 'tool', output: order });
    expect(d.need()).toBe('none');
    expect(d.propose()).toEqual({ type: 'message', text: 'I can cancel order #W1234567 (reason: no longer needed). Shall I go ahead? Please confirm.' });
    expect(d.write()).toEqual({ type: 'tool', tool: 'cancel_pending_order', args: { order_id: '#W1234567', reason: 'no longer needed' } });
  });

  it('uses an answer to "which order?" for one request only: the next vague request asks again', () => {
    const d = new RetailDialogue(reset("Hi. I want to cancel an order. I'd like to know the status of one of my orders."));
    expect(d.requests.map((r) => r.kind)).toEqual(['cancel', 'status']);
    d.afterStep({ type: 'tool', tool: 'find_user_id_by_email', args: { email: 'sara@example.com' } }, { kind: 'tool', output: 'sara_doe_1' });
    d.afterStep({ type: 'tool', tool: 'get_user_details', args: { user_id: 'sara_doe_1' } }, { kind: 'tool', output: { orders: ['#W1111111', '#W2222222'] } });
    expect(d.need()).toBe('order');
    d.afterStep(d.askOrder(), { kind: 'message', text: "It's order #W1111111." });
    const order = (id: string, status: string) => ({ order_id: id, user_id: 'sara_doe_1', status, items: [], payment_history: [{ payment_method_id: 'paypal_1' }] });
    d.afterStep(d.getOrder()!, { kind: 'tool', output: order('#W1111111', 'pending') });
    d.afterStep(d.askReason(), { kind: 'message', text: 'Reason: no longer needed.' });
    d.afterStep(d.write()!, { kind: 'tool', output: order('#W1111111', 'cancelled') });
    expect(d.focus()?.kind).toBe('status');
    // Not the order just cancelled: it asks which order the status question is about.
    expect(d.need()).toBe('order');
    d.afterStep(d.askOrder(), { kind: 'message', text: "It's order #W2222222." });
    expect(d.orderIdOf(d.focus()!)).toBe('#W2222222');
  });

  it('tells repeated items apart by the option values in brackets', () => {
    const d = new RetailDialogue(reset('I want to return some items from order #W1234567.'));
    d.hear("It's the Desk Organizer (acrylic, 3).");
    const item = (id: string, material: string, tiers: string) => ({ name: 'Desk Organizer', product_id: 'p1', item_id: id, options: { material, tiers } });
    const order = { order_id: '#W1234567', status: 'delivered', items: [item('1000000001', 'wood', '2'), item('1000000002', 'acrylic', '3')] };
    expect(d.items(order).map((i) => i.item_id)).toEqual(['1000000002']);
  });
});
