/** The retail world's records, in tau-bench's schema (field names, nesting and value types). */
export type RetailTable = 'orders' | 'products' | 'users';
/** Tables in canonical (sorted) order, which is also tau-bench's load order. */
export const RETAIL_TABLES: readonly RetailTable[] = ['orders', 'products', 'users'];

export type RetailAddress = {
  address1: string;
  address2: string;
  city: string;
  country: string;
  state: string;
  zip: string;
};

export type CreditCard = { source: 'credit_card'; brand: string; last_four: string; id: string };
export type PaypalAccount = { source: 'paypal'; id: string };
export type GiftCard = { source: 'gift_card'; balance: number; id: string };
export type PaymentMethod = CreditCard | PaypalAccount | GiftCard;

export type RetailUser = {
  name: { first_name: string; last_name: string };
  address: RetailAddress;
  email: string;
  payment_methods: Record<string, PaymentMethod>;
  orders: string[];
};

export type OrderItem = {
  name: string;
  product_id: string;
  item_id: string;
  price: number;
  options: Record<string, string>;
};

export type Fulfillment = { tracking_id: string[]; item_ids: string[] };

export type PaymentTransaction = {
  transaction_type: 'payment' | 'refund';
  amount: number;
  payment_method_id: string;
};

/**
 * Order statuses as tau-bench's tools leave them: `pending`, `processed`, `delivered`, `cancelled`
 * in the data, plus `pending (item modified)`, `return requested`, `exchange requested`.
 */
export type OrderStatus =
  | 'pending'
  | 'pending (item modified)'
  | 'processed'
  | 'delivered'
  | 'cancelled'
  | 'return requested'
  | 'exchange requested';

export type RetailOrder = {
  order_id: string;
  user_id: string;
  address: RetailAddress;
  items: OrderItem[];
  fulfillments: Fulfillment[];
  status: OrderStatus | (string & {});
  payment_history: PaymentTransaction[];
  /** Added by cancel_pending_order. */
  cancel_reason?: string;
  /** Added by return_delivered_order_items. */
  return_items?: string[];
  return_payment_method_id?: string;
  /** Added by exchange_delivered_order_items. */
  exchange_items?: string[];
  exchange_new_items?: string[];
  exchange_payment_method_id?: string;
  exchange_price_difference?: number;
};

export type RetailVariant = {
  item_id: string;
  options: Record<string, string>;
  available: boolean;
  price: number;
};

export type RetailProduct = {
  name: string;
  product_id: string;
  variants: Record<string, RetailVariant>;
};

/** The whole database, keyed like tau-bench's `data` dict: order id, product id, user id. */
export type RetailData = {
  orders: Record<string, RetailOrder>;
  products: Record<string, RetailProduct>;
  users: Record<string, RetailUser>;
};

export type RetailRecord<T extends RetailTable> = T extends 'orders'
  ? RetailOrder
  : T extends 'products'
    ? RetailProduct
    : RetailUser;
