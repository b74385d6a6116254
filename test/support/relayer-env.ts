// The least environment the relayer's configuration accepts (relayer/src/config.ts): its secrets and keys,
// with test values. For tests of loadConfig that add the variable they are about.
export const MINIMAL_RELAYER_ENV = {
  QUOTE_SIGNER_PRIVATE_KEY: `0x${"11".repeat(32)}`,
  RELAYER_PRIVATE_KEY: `0x${"22".repeat(32)}`,
  JWT_SECRET: "j".repeat(32),
  WEBHOOK_SECRET_KEY: "w".repeat(32),
} as const;
