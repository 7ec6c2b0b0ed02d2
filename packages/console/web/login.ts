/**
 * The login page: the token (or an operator's name and secret) is posted once to
 * `/console/login`, which answers with the session cookie; the secret is not kept anywhere
 * in the page.
 */
const form = document.getElementById("login")
const input = document.getElementById("token")
const name = document.getElementById("name")
const error = document.getElementById("login-error")

if (form instanceof HTMLFormElement && input instanceof HTMLInputElement && error !== null) {
  form.addEventListener("submit", (event) => {
    event.preventDefault()
    error.textContent = ""
    void fetch("/console/login", {
      method: "POST",
      credentials: "same-origin",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(
        name instanceof HTMLInputElement ? { name: name.value, secret: input.value } : { token: input.value }
      )
    }).then(async (response) => {
      input.value = ""
      if (response.ok) {
        window.location.assign(`/console${window.location.hash}`)
        return
      }
      const body: unknown = await response.json().catch(() => undefined)
      error.textContent =
        typeof body === "object" && body !== null && "message" in body && typeof body.message === "string"
          ? body.message
          : `log in failed (${response.status})`
      input.focus()
    })
  })
}
