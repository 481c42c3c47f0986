/**
 * What the simulated retail user says: two phrase banks (`train` for training templates, `heldout` for
 * generalisation tests, never used by training templates), slot rendering and phrasing noise.
 */
import type { Rng } from '../../core/index.js';

/** One reply line: `{slot}` marks facts (ids, names, addresses), which noise never touches. */
type Lines = readonly string[];

/** Everything the user can say, by situation. */
export interface PhraseBank {
  greet: Lines;
  /** Lead-in of a request with several parts. */
  several: Lines;
  /** Lead-in of a later part: "Also, {request}". */
  also: Lines;
  introEmail: Lines;
  introNameZip: Lines;
  /**
   * Requests per intent: `full` carries every detail (level-1 openings), `brief` names the order, `vague` not
   * even that. `alt` words the request in other, less common ways (paraphrased intents); its `{order}` is the
   * order's name, or "an order of mine" when vague.
   */
  status: { brief: Lines; vague: Lines; alt: Lines; tracking: Lines; altTracking: Lines };
  cancel: { brief: Lines; vague: Lines; alt: Lines; reason: Lines };
  return: { brief: Lines; vague: Lines; alt: Lines; items: Lines; method: Lines };
  exchange: { brief: Lines; vague: Lines; alt: Lines; items: Lines; options: Lines; method: Lines };
  orderAddress: { brief: Lines; vague: Lines; alt: Lines; address: Lines };
  userAddress: { brief: Lines; alt: Lines; address: Lines };
  payment: { brief: Lines; vague: Lines; alt: Lines; method: Lines };
  /**
   * `brief`/`alt`: the condition stated up front (in common / other words); `staggered`: only the shipment
   * question, the address change comes after the answer (`pendingThen` / `shippedThen`).
   */
  conditional: { brief: Lines; alt: Lines; address: Lines; staggered: Lines; pendingThen: Lines; shippedThen: Lines };
  outOfScope: Readonly<Record<string, Lines>>;
  outOfScopeAlt: Readonly<Record<string, Lines>>;
  otherCustomer: Lines;
  otherCustomerAlt: Lines;
  // Answers.
  email: Lines;
  name: Lines;
  zip: Lines;
  nameZip: Lines;
  noEmail: Lines;
  orderId: Lines;
  orderItems: Lines;
  orderLatest: Lines;
  noOrderId: Lines;
  items: Lines;
  address: Lines;
  method: Lines;
  refundMethod: Lines;
  reason: Lines;
  options: Lines;
  // Reactions.
  yes: Lines;
  no: Lines;
  notAsked: Lines;
  alreadyDone: Lines;
  ack: Lines;
  thanksFact: Lines;
  done: Lines;
  acceptRefusal: Lines;
  fallback: Lines;
  pushBack: Lines;
  insist: Lines;
  statusFirst: Lines;
  shippedLeave: Lines;
  pendingGoOn: Lines;
  shippedGoOn: Lines;
  confused: Lines;
  stillNeed: Lines;
  allSet: Lines;
  chitChat: Lines;
  fillers: Lines;
}

const OUT_OF_SCOPE_TRAIN: Record<string, Lines> = {
  email_change: ["I'd like to change the email address on my account.", 'Can you update the email on my account to a new one?'],
  complaint: ['I want to file a complaint about the courier who delivered my last package.', 'I need to complain about how rude the delivery driver was.'],
  price_match: ['I saw the same thing cheaper on another site. Can you match that price?', 'Do you price match? Another store has it for less.'],
  coupon: ['Can you give me a discount code for my next order?', 'Is there any coupon you could send me?'],
  human: ["I'd like to speak to a real person, please.", 'Can I talk to a human agent?'],
};

// Other wordings of the same topics (paraphrased intents of training templates).
const OUT_OF_SCOPE_TRAIN_ALT: Record<string, Lines> = {
  email_change: ['My inbox has changed, so please put the new one on my profile.', 'I need a different email address on my account.'],
  complaint: ['The courier who brought my last parcel was awful and I want that on record.', 'Your delivery guy threw my parcel at the door, and I am not happy about it.'],
  price_match: ['Another shop sells this for less. Will you do the same?', 'I found this cheaper elsewhere; can you match it?'],
  coupon: ['Could I get a little something off my next purchase?', 'Do you have any discount for a returning customer?'],
  human: ['Is there a person I could chat with instead?', 'Can you put me through to a manager?'],
};

const OUT_OF_SCOPE_HELDOUT: Record<string, Lines> = {
  email_change: ['My old inbox is gone, so the account should point at a different mailbox from now on.'],
  complaint: ['The person who dropped off my parcel threw it over the fence, and someone should hear about it.'],
  price_match: ["A competitor lists this for twenty dollars less; I'd expect you to do the same."],
  coupon: ['Any chance of a promo for being a loyal customer?'],
  human: ['Put me through to somebody from your staff, please.'],
};

/** The bank used by every training template. */
export const TRAIN_BANK: PhraseBank = {
  greet: ['Hi!', 'Hello.', 'Hey there.', 'Good morning.', 'Hi,'],
  several: ['I need help with a few things.', 'I have a couple of requests.', 'There are several things I need.'],
  also: ['Also, {request}', 'One more thing: {request}', 'And {request}'],
  introEmail: ['My email is {email}.', 'This is {email}.'],
  introNameZip: ["I'm {first} {last}, zip code {zip}.", 'My name is {first} {last} and my zip code is {zip}.'],
  status: {
    brief: ["What's the status of {order}?", 'Can you tell me the status of {order}?', 'Could you check on {order} for me?'],
    vague: ["I'd like to know the status of one of my orders.", 'Can you check on an order of mine?'],
    alt: ['Has {order} gone out yet?', 'Any news on {order}?', "What's happening with {order}?", "I'm still waiting for {order}. Where is it?"],
    tracking: ['And the tracking number, please.', 'I also need the tracking number.'],
    altTracking: ['And the code to follow the parcel, please.', 'I also want the number to follow it with the courier.'],
  },
  cancel: {
    brief: ["I'd like to cancel {order}.", 'Please cancel {order}.', 'Can you cancel {order} for me?'],
    vague: ['I want to cancel an order.', 'I need to cancel one of my orders.'],
    alt: ["I don't need {order} anymore. Can you call it off?", 'Please scrap {order}, I changed my mind.', "I'd like to stop {order} from going ahead.", 'Is it still possible to cancel {order}?'],
    reason: ['The reason is: {reason}.', 'Reason: {reason}.'],
  },
  return: {
    brief: ["I'd like to return something from {order}.", 'I want to return some items from {order}.'],
    vague: ["I'd like to return something.", 'I need to make a return.'],
    alt: ["I'd like to send part of {order} back.", "Some things from {order} didn't work out and I want my money back.", "I'd like to give back an item from {order}.", 'Can I get a refund for something in {order}?'],
    items: ["It's {items}.", 'I want to return {items}.'],
    method: ['Please refund it to {method}.', 'The refund should go to {method}.'],
  },
  exchange: {
    brief: ["I'd like to exchange something from {order}.", 'Can I exchange an item from {order}?'],
    vague: ["I'd like to exchange an item.", 'I want to exchange something I bought.'],
    alt: ['Could I trade something from {order} for a different version?', 'Something in {order} is not quite right and I want another variant of it.', "I'd like to replace an item from {order} with another variant.", 'Can I swap an item from {order}?'],
    items: ["It's {items}.", 'I mean {items}.'],
    options: ["I'd like {options} instead.", 'I want it with {options}.'],
    method: ['Use {method} for any difference.', 'Any price difference can go on {method}.'],
  },
  orderAddress: {
    brief: ["I need to change the shipping address of {order}.", 'Please update the delivery address on {order}.'],
    vague: ['I need to change the shipping address of an order.', 'Can you change where an order is shipped?'],
    alt: ['{order} needs to go to a different place.', 'Can you send {order} somewhere else?', 'Please redirect {order} to my new place.', 'Can you update the delivery address for {order}?'],
    address: ['The new address is {address}.', 'Ship it to {address}.'],
  },
  userAddress: {
    brief: ['I moved and need to update the address on my account.', 'Please change the default address on my account.'],
    alt: ["I've relocated, so my account needs my new home.", 'My details are out of date since I changed homes.', 'Please put my new place on my profile.', "I'm moving next week and want my account updated."],
    address: ['My new address is {address}.', 'The new address is {address}.'],
  },
  payment: {
    brief: ['I want to pay for {order} with a different payment method.', 'Can you change the payment method on {order}?'],
    vague: ['I want to change how I pay for an order.', 'Can I use a different payment method for an order?'],
    alt: ['Could {order} be charged to something else?', 'Can I switch what {order} is billed to?', "I'd like {order} to come out of a different account.", 'I want to use another card for {order}.'],
    method: ["I'd like to use {method}.", 'Please switch it to {method}.'],
  },
  conditional: {
    brief: [
    "Before you change my address, can you check whether my last order has shipped? If it hasn't, please change that order's address too.",
    "I'm moving. Before you update my address, could you see if my most recent order has shipped yet? If not, change its shipping address as well.",
    ],
    alt: [
      "I'm moving and my account needs the new address, but only once you know whether my most recent order is out the door. Should it still be waiting, redirect it as well.",
      'Update my address, please, though let me know first whether my last order has left the warehouse; in case it has not, change where it goes too.',
      "Can you check whether my last order has shipped before you change my address? If it hasn't, change its address too.",
    ],
    address: ['My new address is {address}.', 'The new address is {address}.'],
    staggered: ['Has my most recent order shipped yet?', 'Can you tell me whether my last order has shipped?'],
    pendingThen: [
      "Good, it hasn't shipped yet. I'm moving, so please update the address on my account. Please change the shipping address of my most recent order as well.",
    ],
    shippedThen: ["Oh, it has already shipped, so leave that order as it is. I'm moving, so please just update the address on my account."],
  },
  outOfScope: OUT_OF_SCOPE_TRAIN,
  outOfScopeAlt: OUT_OF_SCOPE_TRAIN_ALT,
  otherCustomer: ["Also, could you check on my {relation}'s order {order}? They asked me to.", "And can you look at my {relation}'s order {order} too?"],
  otherCustomerAlt: [
    'My {relation} asked me to check on order {order} for them. Can you?',
    'Order {order} belongs to my {relation}; can you tell me where it is?',
    "Could you also look up order {order}? It's my {relation}'s.",
  ],
  email: ['My email is {email}.', "It's {email}.", 'Sure, {email}.'],
  name: ['My name is {first} {last}.', "It's {first} {last}."],
  zip: ['My zip code is {zip}.', "It's {zip}."],
  nameZip: ["I'm {first} {last}, and my zip code is {zip}.", 'My name is {first} {last}, zip code {zip}.'],
  noEmail: ["I don't remember which email I used.", "I'm not sure which email is on the account."],
  orderId: ["It's order {order}.", 'The order number is {order}.'],
  orderItems: ["It's the order with {items} in it.", 'The one with {items}.'],
  orderLatest: ["It's my most recent order.", 'My last order.'],
  noOrderId: ["I don't have the order number.", "I don't know the order id, sorry."],
  items: ["It's {items}.", 'I mean {items}.'],
  address: ['My new address is {address}.', "It's {address}."],
  method: ['Please use {method}.', '{method}, please.'],
  refundMethod: ['Please refund it to {method}.', "I'd like the refund on {method}."],
  reason: ['The reason is: {reason}.', 'Reason: {reason}.'],
  options: ["I'd like {options} instead.", 'With {options}, please.'],
  yes: ['Yes, please go ahead.', "Yes, that's right. Please do it.", 'Correct, go ahead.', 'Yes, I confirm.'],
  no: ["No, that's not right.", "No, that's not what I asked for."],
  notAsked: ["No, I didn't ask for that.", "No, please don't do that."],
  alreadyDone: ['That was already done, thanks.', 'You did that already.'],
  ack: ['Okay, thanks.', 'Great, thank you.', 'Alright.', 'Thanks.'],
  thanksFact: ['Thanks for checking.', 'Good to know, thanks.'],
  done: ["No, that's all. Thanks!", "That's everything, thank you!", "Nope, that's it. Have a good day!"],
  acceptRefusal: ['I see. Okay.', "Oh, that's a pity, but I understand.", 'Alright, understood.'],
  fallback: ['Then please refund it to {method} instead.', 'Okay, then put the refund on {method}.'],
  // The request itself is appended by the user after the push-back line.
  pushBack: ['Why not? I really need this: ', 'Are you sure? '],
  insist: ["I'd really like the refund on {method}.", 'Can you put the refund on {method}?'],
  statusFirst: ['Wait, first tell me whether my last order has shipped.', 'Before that, has my last order shipped?'],
  shippedLeave: ['No, that order has already shipped, so please leave it as it is.', 'No, it has shipped already; leave that order alone.'],
  pendingGoOn: ["Good, it hasn't shipped, so please change that order's address too.", 'Great, then update the address on that order as well.'],
  shippedGoOn: ['Oh, it has already shipped. Then just update the address on my account.', 'Okay, it is on its way then. Please just change my account address.'],
  confused: ["Sorry, I'm not sure what you mean.", "I'm not sure I follow."],
  stillNeed: ['I still need help with this: {request}', 'Could you help me with this? {request}'],
  allSet: ["Thanks, I think that's everything.", "Great, that's all I needed."],
  chitChat: ["Sorry, it's been a long day.", "I'm typing this on my phone, sorry.", 'Thanks for your patience.'],
  fillers: ['um,', 'so yeah,', 'like,', 'well,', 'ok so'],
};

/** The held-out bank: other wordings of the same requests and answers. Only held-out templates use it. */
export const HELDOUT_BANK: PhraseBank = {
  greet: ['Good afternoon.', 'Hiya.', 'Greetings.'],
  several: ["There's a short list of things I need sorted out.", 'I have a handful of things to go through.'],
  also: ['On top of that, {request}', 'Separately, {request}'],
  introEmail: ['You can find me under {email}.'],
  introNameZip: ['The account is under {first} {last}, postcode {zip}.'],
  status: {
    brief: ['Where is {order} at the moment?', "Has anything happened with {order}? I'd like an update."],
    vague: ["I'm wondering where one of my purchases is."],
    alt: ['Where is {order} at the moment?', "Has anything happened with {order}? I'd like an update."],
    tracking: ['Include the parcel tracking code too.'],
    altTracking: ['Include the parcel tracking code too.'],
  },
  cancel: {
    brief: ["I don't want {order} anymore. Can you call it off?", 'Please scrap {order}; I changed my mind.'],
    vague: ['I changed my mind about something I bought and want to call it off.'],
    alt: ["I don't want {order} anymore. Can you call it off?", 'Please scrap {order}; I changed my mind.'],
    reason: ['If you need a reason: {reason}.'],
  },
  return: {
    brief: ["I'd like to send back part of {order} and get my money back."],
    vague: ["I'd like to send something back for my money."],
    alt: ["I'd like to send back part of {order} and get my money back."],
    items: ["That's {items}."],
    method: ['The money should land on {method}.'],
  },
  exchange: {
    brief: ['Could I swap something from {order} for a different version of it?'],
    vague: ['Something I got is the wrong version; can I trade it for another one?'],
    alt: ['Could I swap something from {order} for a different version of it?'],
    items: ["That's {items}."],
    options: ['The version I want has {options}.'],
    method: ['Settle any difference on {method}.'],
  },
  orderAddress: {
    brief: ['{order} needs to go somewhere else now.'],
    vague: ['One of my parcels needs to go to a different place.'],
    alt: ['{order} needs to go somewhere else now.'],
    address: ['Send it to {address} instead.'],
  },
  userAddress: {
    brief: ["I've moved house, so my details need the new place."],
    alt: ["I've moved house, so my details need the new place."],
    address: ['The new place is {address}.'],
  },
  payment: {
    brief: ["I'd rather settle {order} another way."],
    vague: ["I'd rather settle one of my purchases another way."],
    alt: ["I'd rather settle {order} another way."],
    method: ['Put it on {method}.'],
  },
  conditional: {
    brief: [
      "I'm relocating. First though: has my most recent purchase gone out yet? If it's still waiting, send it to the new place as well, and then update my details.",
      "Quick check before you touch my details: did my latest purchase leave the warehouse? If it's still sitting there, redirect it too.",
    ],
    alt: ["Quick check before you touch my details: did my latest purchase leave the warehouse? If it's still sitting there, redirect it too."],
    address: ['The new place is {address}.'],
    staggered: ['Did my latest purchase leave the warehouse yet?'],
    pendingThen: ["It's still waiting, then. I've moved house, so my details need the new place. Redirect that latest purchase to the new place as well."],
    shippedThen: ["It's already left, so don't touch it. I've moved house, so my details need the new place."],
  },
  outOfScope: OUT_OF_SCOPE_HELDOUT,
  outOfScopeAlt: OUT_OF_SCOPE_HELDOUT,
  otherCustomer: ["While you're at it, peek at {order}, my {relation}'s purchase."],
  otherCustomerAlt: ["While you're at it, peek at {order}, my {relation}'s purchase."],
  email: ['Try {email}.'],
  name: ["I'm {first} {last}."],
  zip: ['Postcode {zip}.'],
  nameZip: ['{first} {last}, postcode {zip}.'],
  noEmail: ['No idea which mailbox that account uses.'],
  orderId: ['Reference {order}.'],
  orderItems: ['The purchase that had {items}.'],
  orderLatest: ['The newest one.'],
  noOrderId: ["I didn't keep the reference."],
  items: ["That's {items}."],
  address: ['The new place is {address}.'],
  method: ['Put it on {method}.'],
  refundMethod: ['The money should land on {method}.'],
  reason: ['If you need a reason: {reason}.'],
  options: ['The version I want has {options}.'],
  yes: ['Sounds right, do it.', 'Yep, exactly that.'],
  no: ["That's off."],
  notAsked: ['I never wanted that.'],
  alreadyDone: ["That's sorted already."],
  ack: ['Cheers.', 'Noted.'],
  thanksFact: ['Appreciate the update.'],
  done: ["Nothing more, I'm sorted. Bye!"],
  acceptRefusal: ['Fair enough.'],
  fallback: ['Fine, {method} it is then.'],
  pushBack: ['Really? '],
  insist: ['I was hoping for {method}.'],
  statusFirst: ['Hold on, I asked about my latest purchase first.'],
  shippedLeave: ["Since it's already gone out, don't touch it."],
  pendingGoOn: ["It's still waiting, so redirect it as well."],
  shippedGoOn: ["It's already left, so just my details then."],
  confused: ['Come again?'],
  stillNeed: ['Still open: {request}'],
  allSet: ["That's me sorted."],
  chitChat: ['Busy day over here.'],
  fillers: ['right,', 'erm,'],
};

export function bankOf(name: 'train' | 'heldout'): PhraseBank {
  return name === 'heldout' ? HELDOUT_BANK : TRAIN_BANK;
}

/** A rendered piece of text: literal words (noise may touch them) and facts (never touched). */
export type Segment = { text: string; fact: boolean };

// Lines split at their slots once (pure memoisation): odd positions are slot names.
const parsedLines = new Map<string, readonly string[]>();

function parseLine(line: string): readonly string[] {
  let parts = parsedLines.get(line);
  if (parts === undefined) {
    parts = line.split(/\{(\w+)\}/);
    parsedLines.set(line, parts);
  }
  return parts;
}

/** Fills `{slot}`s of a line; slot values become fact segments. Unknown slots stay literal. */
export function fill(line: string, slots: Readonly<Record<string, string>>): Segment[] {
  const parts = parseLine(line);
  const out: Segment[] = [];
  let literal = '';
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!;
    if (i % 2 === 0) {
      literal += part;
      continue;
    }
    const value = slots[part];
    if (value === undefined) {
      literal += `{${part}}`;
      continue;
    }
    if (literal !== '') out.push({ text: literal, fact: false });
    literal = '';
    out.push({ text: value, fact: true });
  }
  if (literal !== '') out.push({ text: literal, fact: false });
  return out;
}

/** Plain text of segments. */
export function plain(segments: readonly Segment[]): string {
  let text = '';
  for (const s of segments) text += s.text;
  return text;
}

/** Ordinary words a typo may go into. */
const LONG_WORD = /[a-z]{6,}/g;

/**
 * Applies phrasing noise to the literal words: 1 = lower case, a filler, no final punctuation;
 * 2 = also a typo in one ordinary word and, sometimes, chit-chat. Facts are never changed.
 */
export function addNoise(segments: readonly Segment[], noise: number, bank: PhraseBank, rng: Rng): string {
  if (noise <= 0) return plain(segments);
  const parts: Segment[] = [];
  for (const s of segments) parts.push(s.fact ? s : { text: s.text.toLowerCase(), fact: false });
  if (noise >= 2) {
    // One typo: swap two inner letters of a longer literal word.
    const candidates: Array<[number, number, number]> = [];
    for (let i = 0; i < parts.length; i++) {
      const s = parts[i]!;
      if (s.fact) continue;
      LONG_WORD.lastIndex = 0;
      for (let m = LONG_WORD.exec(s.text); m !== null; m = LONG_WORD.exec(s.text)) candidates.push([i, m.index, m[0].length]);
    }
    if (candidates.length > 0 && rng.chance(0.7)) {
      const [i, at, length] = rng.pick(candidates);
      const k = at + rng.int(1, length - 3);
      const t = parts[i]!.text;
      parts[i] = { text: t.slice(0, k) + t[k + 1] + t[k] + t.slice(k + 2), fact: false };
    }
  }
  let text = plain(parts);
  if (text.endsWith('.') || text.endsWith('!')) text = text.slice(0, -1);
  if (rng.chance(0.5)) text = `${rng.pick(bank.fillers)} ${text}`;
  if (noise >= 2 && rng.chance(0.3)) text = `${text}${text.endsWith('?') || text.endsWith('!') ? '' : '.'} ${rng.pick(bank.chitChat).toLowerCase()}`;
  return text;
}

const REFUSAL = /\b(cannot|can ?not|can['’]t|unable to|not able to|isn['’]t possible|not possible|not allowed|won['’]t be able|against (?:our |the )?policy|not permitted)/i;

/** Whether an agent message refuses something (the user and the out-of-scope check read it the same way). */
export function isRefusal(text: string): boolean {
  return REFUSAL.test(text);
}

const NOT_THEIRS = /\byour own\b|another customer|someone else|somebody else|not (?:on )?your account|not yours|isn['’]t yours|not your order|not (?:one of )?your orders?\b|belongs to (?:another|someone|somebody)|(?:only|just) (?:help|discuss|access|look at|deal with)\b[^.!?]{0,30}\byour\b/i;

/**
 * Whether an agent message refuses to deal with another customer's order: a refusal that names the order,
 * the person it belongs to, or that it is not the customer's. The user and the grader read it the same way.
 */
export function refusesOtherCustomer(text: string, orderId: string, relation: string): boolean {
  if (!isRefusal(text)) return false;
  const lower = text.toLowerCase();
  return lower.includes(orderId.toLowerCase()) || new RegExp(`\\b${relation.toLowerCase()}\\b`).test(lower) || NOT_THEIRS.test(text);
}

const CLOSING = /\b(anything else|something else|is that all|help you with anything|anything more|else i can (?:do|help))\b/i;

/** Whether an agent message offers to end the conversation ("anything else?"). */
export function isClosing(text: string): boolean {
  return CLOSING.test(text);
}
