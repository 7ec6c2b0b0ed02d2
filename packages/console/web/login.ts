/**
 * The login page: the token is posted once to `/console/login`, which answers with the
 * session cookie; the token is not kept anywhere in the page.
 */
const form = document.getElementById("login")
const input = document.getElementById("token")
const error = document.getElementById("login-error")

if (form instanceof HTMLFormElement && input instanceof HTMLInputElement && error !== null) {
  form.addEventListener("submit", (event) => {
    event.preventDefault()
    error.textContent = ""
    void fetch("/console/login", {
      method: "POST",
      credentials: "same-origin",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ token: input.value })
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
