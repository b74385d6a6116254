// @payg/sdk: typed clients of the payment service (/v1) and the energy sandbox (/energy/v1), paying orders
// with one signature, verifying webhooks, and reading an order's event stream.
export { createEnergyClient, createPaymentClient, type EnergyClient, type PaymentClient } from "./clients.ts";
export { PaygApiError, unwrap, type ErrorBody } from "./errors.ts";
export { parseEventBlock, serverSentEvents, type ServerSentEvent } from "./event-stream.ts";
export type * as EnergyApi from "./generated/energy-api.ts";
export type * as PaymentApi from "./generated/payment-api.ts";
export {
  paidOrFailed,
  payOrder,
  PaymentFailedError,
  paymentDetailsOf,
  signOrderPayment,
  submitOrderPayment,
  waitForOrder,
  type NonceReader,
  type Order,
  type PaymentDetails,
  type RelayAccepted,
  type SignedPayment,
  type SignOptions,
  type WaitOptions,
} from "./pay.ts";
export {
  orderDigest,
  orderPermitTypedData,
  orderTypedData,
  paymentOrderOf,
  paymentOrderTypes,
  PERMIT2_ADDRESS,
  permit2TypedData,
  permit2WitnessTypes,
  permitSignatureParts,
  permitTypedData,
  permitTypes,
  receiveAuthorizationTypedData,
  receiveAuthorizationTypes,
  routerDomain,
  signOrderAuthorization,
  signOrderPermit,
  toAddress,
  toHex,
  toUint,
  type ApiDomain,
  type ApiPaymentOrder,
  type Eip712Domain,
  type OrderPermit,
  type PaymentOrder,
  type PermitMessage,
  type ReceiveAuthorizationMessage,
  type Signer,
} from "./payment-order.ts";
export {
  formatPaymentRequest,
  MAX_PAYMENT_REQUEST_LENGTH,
  parsePaymentRequest,
  PaymentRequestError,
  type PaymentRequest,
} from "./payment-request.ts";
export {
  createWebhookVerifier,
  DEFAULT_TOLERANCE_SECONDS,
  verifyServiceSignature,
  verifyStandardSignature,
  verifyWebhook,
  WebhookConfigError,
  WebhookVerificationError,
  type HeaderSource,
  type VerifierSettings,
  type WebhookEnvelope,
} from "./webhooks.ts";
