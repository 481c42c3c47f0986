/** The operating notes every api-workflows agent is shown (the domain's policy text). */

export const API_POLICY_TEXT = `Operating notes for the back-office APIs.
- Ids (cus_, inv_, pay_, tkt_, shp_, evt_, stf_, sku_) come from tool outputs; never invent them.
- Money is integer cents (12.50 EUR = 1250). Dates are ISO YYYY-MM-DD; times ISO-8601 in UTC unless a zone is given.
- Lists are paginated: follow next_cursor until it is null.
- A service error arrives as output.error with an HTTP status; errors of your call itself arrive as the step's error.
  401 token_expired: call refresh_token, then retry.
  429 rate_limited: wait retry_after seconds (the wait tool, or other useful calls) before calling that service again.
  503 upstream_error: retry. 503 service_unavailable: the tool is down today; use another tool that does the same.
  504 gateway_timeout: the write may or may not have been applied. Retry only with the same idempotency_key, or check first.
  206 partial_content: the page was cut short; request the same page again.
  400 field_renamed: the API version renamed a field; resend with the new name.
- A response with replica_lag_s may be stale: read again with consistent: true before acting on it.
- Send idempotency_key on writes. Never repeat a write that may have been applied.
- Deprecated tools still answer but will be removed: prefer their replacement.
- Ask the user when the request leaves something out; ask for confirmation when a tool needs it, naming what you will do.`;
