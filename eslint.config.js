// ESLint: typescript-eslint's recommended rules plus the habits of STYLE.md that a
// linter can check (no `any`, no non-null `!`, no console in packages), and the
// architecture's boundaries: the engine imports no tillflow package and nothing of Node;
// core imports no adapter, SQL driver, HTTP server or Node module, and each of its layers
// (model < terminal < lifecycle < projections < testing) imports only the layers below
// it; no app imports another app's sources. Formatting is Prettier's job (`npm run lint`
// runs both). packages/core/test/Layers.test.ts shows the boundaries failing a violation.
import js from "@eslint/js"
import tseslint from "typescript-eslint"

const nodeAndAdapters = [
  { group: ["node:*"], message: "core and the engine know nothing of Node: that belongs in an adapter." },
  {
    group: [
      "@effect/platform-node",
      "@effect/platform-node/*",
      "@effect/sql",
      "@effect/sql/*",
      "@effect/sql-*"
    ],
    message: "core and the engine know nothing of SQL drivers or Node servers: that belongs in an adapter."
  },
  {
    group: [
      "@tillflow/store-sql",
      "@tillflow/http",
      "@tillflow/callback",
      "@tillflow/simulator",
      "@tillflow/intake"
    ],
    message: "core and the engine import no adapter: adapters import them."
  }
]
const above = (layer, higher) => ({
  group: higher.flatMap((h) => [`../${h}/*`, `../../${h}/*`, `./${h}/*`]),
  message: `core's ${layer}/ layer imports only the layers below it (model < terminal < lifecycle < projections < testing).`
})
const layerRule = (layer, higher) => ({
  files: [`packages/core/src/${layer}/**/*.ts`],
  rules: {
    "no-restricted-imports": [
      "error",
      { patterns: higher.length === 0 ? nodeAndAdapters : [...nodeAndAdapters, above(layer, higher)] }
    ]
  }
})
const apps = {
  worker: "@tillflow/worker",
  cli: "@tillflow/cli",
  simulator: "@tillflow/simulator-app",
  bench: "@tillflow/bench"
}
const boundaries = [
  {
    files: ["packages/engine/src/**/*.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            ...nodeAndAdapters,
            {
              group: ["@tillflow/*"],
              message: "the engine knows no payment: it imports no tillflow package."
            }
          ]
        }
      ]
    }
  },
  layerRule("model", ["terminal", "lifecycle", "projections", "testing"]),
  layerRule("terminal", ["lifecycle", "projections", "testing"]),
  layerRule("lifecycle", ["projections", "testing"]),
  layerRule("projections", ["testing"]),
  layerRule("testing", []),
  ...Object.entries(apps).map(([app, name]) => ({
    files: [`apps/${app}/src/**/*.ts`, `apps/${app}/test/**/*.ts`],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            {
              group: [
                "../../*/src/*",
                "../../../*/src/*",
                ...Object.values(apps).flatMap((other) => (other === name ? [] : [other, `${other}/*`]))
              ],
              message: "an app imports packages only, never another app's sources."
            }
          ]
        }
      ]
    }
  }))
]

export default tseslint.config(
  {
    ignores: ["**/node_modules/**", "**/build/**", "**/dist/**", "packages/console/assets/**", ".tillflow/**"]
  },
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
  ...boundaries,
  {
    files: ["**/test/**/*.ts"],
    rules: { "@typescript-eslint/no-non-null-assertion": "off" }
  }
)
