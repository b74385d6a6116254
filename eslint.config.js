// ESLint: TypeScript through typescript-eslint's parser; every regular expression in code that sees request
// data (the relayer, the indexer's API, the SDK, the device-cloud simulator) is checked for super-linear
// backtracking, the class of bug a single crafted request can use to stall the event loop.
import regexp from "eslint-plugin-regexp";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["node_modules/**", "artifacts/**", "cache/**", "generated/**", "coverage/**", ".local/**", "**/.ponder/**", "indexer/generated/**", "ignition/deployments/**"] },
  {
    files: ["**/*.ts", "**/*.js"],
    languageOptions: { parser: tseslint.parser, ecmaVersion: "latest", sourceType: "module" },
    linterOptions: { reportUnusedDisableDirectives: "off" },
  },
  {
    files: ["relayer/**/*.ts", "relayer/**/*.js", "indexer/**/*.ts", "sdk/**/*.ts", "device-cloud/**/*.ts"],
    plugins: { regexp },
    rules: {
      "regexp/no-super-linear-backtracking": ["error", { report: "potential" }],
      "regexp/no-super-linear-move": ["error", { report: "potential", ignoreSticky: false, ignorePartial: false }],
    },
  },
);
