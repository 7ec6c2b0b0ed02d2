// ESLint: typescript-eslint's recommended rules plus the habits of STYLE.md that a
// linter can check (no `any`, no non-null `!`, no console in packages). Formatting is
// Prettier's job (`npm run lint` runs both).
import js from "@eslint/js"
import tseslint from "typescript-eslint"

export default tseslint.config(
  { ignores: ["**/node_modules/**", "**/build/**", "**/dist/**", ".tillflow/**"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      "@typescript-eslint/no-explicit-any": "error",
      "@typescript-eslint/no-non-null-assertion": "error",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/no-empty-object-type": "off",
      "@typescript-eslint/no-namespace": "off",
      "require-yield": "off",
      "no-constant-condition": ["error", { checkLoops: false }]
    }
  },
  {
    files: ["packages/*/src/**/*.ts"],
    rules: { "no-console": "error" }
  },
  {
    files: ["**/test/**/*.ts"],
    rules: { "@typescript-eslint/no-non-null-assertion": "off" }
  }
)
