/** What the simulated user says: request wordings per ask (training and held-out banks), framing, answers. */

/** Request wordings per ask key; `{slot}` is filled from the task's slots. */
export const TRAIN_ASKS: Readonly<Record<string, readonly string[]>> = {
  'lookup.1': ['What is the status of invoice {invoice_id}? Answer with the status only.', 'Is invoice {invoice_id} open, paid or void? Just the status, please.'],
  'lookup.2': ['How much is invoice {invoice_number} for? Answer like 12.34 EUR.', 'What is the amount of invoice {invoice_number}? Reply as amount and currency, e.g. 12.34 EUR.'],
  'lookup.3': ['My email is {email}. What is the total of my open invoices? Answer like 12.34 EUR.', 'I am {email}: how much do my open invoices add up to? Reply as e.g. 12.34 EUR.'],
  'lookup.4': ['My email is {email}. How much do I still owe on my open invoices once settled payments are taken off? Answer like 12.34 EUR.', 'I am {email}: what is left to pay on my open invoices after the payments that already settled? Reply as e.g. 12.34 EUR.'],
  'lookup.6': ['My email is {email}. How much do I still owe on my open invoices once settled payments are taken off, and what is my account manager\'s email? Answer like "12.34 EUR; name@ops.example".', 'I am {email}: what is left to pay on my open invoices after settled payments, and who is my account manager (their email)? Reply as "12.34 EUR; name@ops.example".'],
  'create.1': ['Please open a ticket for customer {customer_id} with the subject "{subject}".', 'Could you create a ticket, subject "{subject}", for customer {customer_id}?'],
  'create.2': ['Please open a ticket with the subject "{subject}" for the customer whose email is {email}.', 'Could you create a ticket "{subject}" for our customer {email}?'],
  'create.3': ['Please open a high-priority ticket "{subject}" for the customer {email}, assigned to their account manager.', 'Create a ticket "{subject}" for {email}: high priority, and give it to their account manager.'],
  'create.4': ['Please open a high-priority ticket "{subject}" for the customer {email}, assigned to their account manager, then email the customer the new ticket id.', 'Create a ticket "{subject}" for {email} (high priority, their account manager owns it) and send the customer an email with the ticket id.'],
  'create.5': ['Please open a high-priority ticket "{subject}" for the customer {email}, assigned to their account manager, then email the ticket id to the customer and to the account manager.', 'Create a ticket "{subject}" for {email} (high priority, owned by their account manager) and email the ticket id to both the customer and the manager.'],
  'bulk.ids': ['Staff member {from_id} is on leave. Reassign all of their {which} tickets to {to_id}.', '{from_id} is away: move every {which} ticket assigned to them over to {to_id}.'],
  'bulk.names': ['{from_name} is on leave. Reassign all of their {which} tickets to {to_name}.', '{from_name} is away: move every {which} ticket of theirs over to {to_name}.'],
  'bulk.recheck': ['{from_name} is on leave. Reassign all of their {which} tickets to {to_name}. The team moves tickets around today, so check each ticket is still theirs right before you change it.', '{from_name} is away: move every {which} ticket of theirs to {to_name}; tickets get moved around today, so re-check each one just before changing it.'],
  'conditional.0': ['Please email me at {email} whether invoice {invoice_number} is still open or already settled.', 'Can you send me ({email}) a note on whether invoice {invoice_number} is open or not?'],
  'conditional.1': ['If invoice {invoice_number} is still open, charge what is left on it to my card and email me a receipt at {email}; if it is already paid, just email me that nothing is due.', 'Invoice {invoice_number}: if it is open, charge the remaining balance to my card and send a receipt to {email}; otherwise send me a note that nothing is due.'],
  'conditional.recheck': ['If invoice {invoice_number} is still open, charge what is left on it to my card and email me a receipt at {email}; if it is already paid, just email me that nothing is due. A payment may be in flight, so check the invoice right before you charge.', 'Invoice {invoice_number}: if open, charge the remaining balance to my card and send a receipt to {email}, else email me that nothing is due. A payment might settle any minute: re-check just before charging.'],
  'reconcile.id': ['Billing and payments disagree for customer {customer_id}. Make each of their invoices match the payments: paid when settled payments cover the amount, open otherwise, void ones untouched.', 'Invoice statuses for customer {customer_id} are out of sync with payments: set each to paid if settled payments cover it, else open; leave void invoices alone.'],
  'reconcile.email': ['Billing and payments disagree for my account ({email}). Make each of my invoices match the payments: paid when settled payments cover the amount, open otherwise, void ones untouched.', 'My invoice statuses ({email}) are out of sync with my payments: set each to paid if settled payments cover it, else open; leave void invoices alone.'],
  'schedule.1': ['Book a {duration}-minute "{title}" for {organiser_id} on {date} (their local date) at the earliest time they are free.', 'Put a {duration}-minute "{title}" in {organiser_id}\'s calendar on {date}, their local date, as early as they are free.'],
  'schedule.1n': ['Book a {duration}-minute "{title}" for {organiser_name} on {date} (their local date) at the earliest time they are free.', 'Put a {duration}-minute "{title}" in {organiser_name}\'s calendar on {date}, their local date, as early as they are free.'],
  'schedule.2': ['Book a {duration}-minute "{title}" for {organiser_id} with {other_id} on {date} ({organiser_id}\'s local date) at the earliest time both are free in their working hours.', 'Set up a {duration}-minute "{title}" organised by {organiser_id} with {other_id} as attendee on {date} (organiser\'s local date), earliest slot that suits both.'],
  'schedule.2n': ['Book a {duration}-minute "{title}" for {organiser_name} with {other_name} on {date} ({organiser_name}\'s local date) at the earliest time both are free in their working hours.', 'Set up a {duration}-minute "{title}" organised by {organiser_name} with {other_name} as attendee on {date} (organiser\'s local date), earliest slot that suits both.'],
  'recovery.0': ['Please charge invoice {invoice_number} in full to my card and email the receipt to {email}.', 'Charge the whole of invoice {invoice_number} to my card, then send the receipt to {email}.'],
  'recovery.1': ['Please charge invoice {invoice_number} in full to the card and email the receipt to the customer on the invoice.', 'Charge the whole of invoice {invoice_number} to the card, then send the receipt to the invoice\'s customer.'],
};

/** The held-out bank: wordings no training task uses. */
export const HELDOUT_ASKS: Readonly<Record<string, readonly string[]>> = {
  'replacement.0': ['Shipment {shipment_id} turned up broken. Give the money for invoice {invoice_id} back, send the same goods again, and shut ticket {ticket_id}.'],
  'replacement.1': ['Shipment {shipment_id} turned up broken. Give the money for invoice {invoice_number} back, send the same goods again, and shut ticket {ticket_id}.'],
  'replacement.2': ['Shipment {shipment_id} turned up broken. Give the money for invoice {invoice_number} back, send the same goods again, shut ticket {ticket_id}, and drop the customer ({email}) a line about it.'],
};

/** What a withheld slot becomes in the request. */
export const VAGUE: Readonly<Record<string, string>> = {
  invoice_id: 'my invoice',
  invoice_number: 'my invoice',
  email: 'me (I will give you my email if you need it)',
  subject: 'the problem I have',
  date: 'a day this week',
  ticket_id: 'the ticket',
};

export const GREETINGS = { train: ['Hi.', 'Hello,', 'Good morning.'], heldout: ['Hey there —', 'Right, so:'] } as const;

/** Words of a slot's name that a clarifying question must contain for the user to answer it. */
export function slotWords(slot: string): string[] {
  return slot === 'email' ? ['email'] : slot === 'date' ? ['date', 'day'] : slot === 'subject' ? ['subject', 'problem'] : slot.split('_');
}
