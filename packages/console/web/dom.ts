/**
 * The page is built from DOM nodes, never from HTML text: every value becomes a text node
 * or an attribute set through the DOM, so nothing a payment, a terminal or a person typed
 * can become markup or script. (`innerHTML` appears nowhere in the console.)
 */

/** What a child of an element may be. */
export type Child = Node | string | number | false | null | undefined | ReadonlyArray<Child>

/** Attributes: strings set as attributes, functions under `on…` as listeners. */
export type Attributes = Record<string, string | number | boolean | undefined | ((event: Event) => void)>

const append = (parent: Node, child: Child): void => {
  if (child === false || child === null || child === undefined) return
  if (Array.isArray(child)) {
    for (const c of child) append(parent, c)
  } else if (child instanceof Node) {
    parent.appendChild(child)
  } else {
    parent.appendChild(document.createTextNode(String(child)))
  }
}

/** An element with attributes and children. */
export const h = <K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Attributes = {},
  ...children: Array<Child>
): HTMLElementTagNameMap[K] => {
  const element = document.createElement(tag)
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === false) continue
    if (typeof value === "function") element.addEventListener(name.slice(2).toLowerCase(), value)
    else element.setAttribute(name, value === true ? "" : String(value))
  }
  append(element, children)
  return element
}

const svgNs = "http://www.w3.org/2000/svg"

/** An SVG element (the ledger's chart). */
export const svg = (
  tag: string,
  attributes: Record<string, string | number> = {},
  ...children: Array<Child>
) => {
  const element = document.createElementNS(svgNs, tag)
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, String(value))
  append(element, children)
  return element
}

/** Replaces the children of `parent`. */
export const replace = (parent: Element, ...children: Array<Child>): void => {
  parent.replaceChildren()
  append(parent, children)
}

// What each element shows, as the key its content was rendered from (`replaceChanged`).
const shownKeys = new WeakMap<Element, string>()

/**
 * `replace`, unless `key` — what the children are rendered from (the answer of a read, as
 * JSON) — is what `parent` shows already. A live refresh that changes nothing then leaves
 * the page as it is: a link under the pointer is not swapped between the press and the
 * release of a click (the click lost), nor a selection, a hover or the scroll position.
 */
export const replaceChanged = (parent: Element, key: string, ...children: Array<Child>): void => {
  if (shownKeys.get(parent) === key) return
  shownKeys.set(parent, key)
  replace(parent, ...children)
}
