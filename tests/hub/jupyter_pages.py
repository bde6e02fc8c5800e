"""What a user does in their browser on the hub: log in, open nbgrader's Assignments tab, fetch,
edit and run a notebook in JupyterLab, submit, fetch feedback; the instructor's Formgrader and
a terminal. Each step waits for what the page shows, not for a status code."""
from __future__ import annotations

import time

LONG = 300_000  # ms: a cold single-user server, a self-check on a loaded two-core machine


def log_in(browser, hub, name: str):
    """A fresh browser context logged in as `name`; returns its page on the user's JupyterLab."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.bad_responses = []
    page.on("response", lambda r: page.bad_responses.append(f"{r.status} {r.url}") if r.status >= 400 else None)
    page.goto(hub.url + "hub/login")
    page.fill("#username_input", name)
    page.fill("#password_input", hub.account(name).password)
    page.click("#login_submit")
    page.wait_for_url(f"**/user/{name}/lab**", timeout=LONG)
    wait_for_lab(page)
    return page


def wait_for_lab(page) -> None:
    page.wait_for_selector('.lm-MenuBar-itemLabel:text("Nbgrader")', timeout=LONG)


def menu(page, top: str, item: str) -> None:
    page.locator(f'.lm-MenuBar-itemLabel:text-is("{top}")').click()
    page.locator(f'.lm-Menu-itemLabel:text-is("{item}")').first.click()


def assignments(page):
    """nbgrader's Assignments tab (Nbgrader > Assignment List), once it has listed the course."""
    if not page.locator("#nbgrader-assignment-list").is_visible():
        menu(page, "Nbgrader", "Assignment List")
    panel = page.locator("#nbgrader-assignment-list")
    panel.get_by_text("Released assignments").wait_for()
    return panel


def downloaded(panel):
    return panel.locator("#fetched_assignments_list").first


def assignment_row(listing, assignment: str):
    """One assignment's row in a list of the Assignments tab (its Fetch or Submit button), not
    the rows of its notebooks nested under it."""
    return listing.locator(".list_item:not(.nested_list_item)", has_text=assignment).first


def refresh(panel) -> None:
    panel.locator("button[title='Refresh assignments list'], #refresh_assignments_list").first.click()


def section(panel, heading: str):
    """The panel's part under `heading` ('Released assignments', 'Downloaded assignments', ...)."""
    return panel.locator(".panel", has=panel.page.get_by_text(heading, exact=True))


def wait_text(locator, text: str, timeout: float = LONG) -> str:
    deadline = time.monotonic() + timeout / 1000
    while True:
        shown = locator.inner_text()
        if text in shown:
            return shown
        if time.monotonic() > deadline:
            locator.page.screenshot(path=f"/tmp/tvm-course-hub-test-{int(time.time())}.png")
            raise AssertionError(f"{text!r} never shown; the page shows:\n{shown[-2000:]}")
        time.sleep(0.5)


def open_notebook(page, hub, name: str, path: str) -> None:
    page.goto(f"{hub.url}user/{name}/lab/tree/{path}")
    wait_for_lab(page)
    page.locator(".jp-NotebookPanel:visible .jp-Cell").first.wait_for(timeout=LONG)
    # Keys sent before the kernel is up can be lost with the cell's focus: wait for it. JupyterLab
    # may ask which kernel to start (when its list of kernels is not in yet): take the one it offers.
    idle = page.locator(".jp-NotebookPanel:visible .jp-Notebook-ExecutionIndicator[data-status='idle']")
    ask = page.locator(".jp-Dialog", has_text="Select Kernel")
    deadline, settled = time.monotonic() + LONG / 1000, 0
    while settled < 3:  # idle, with no dialog, three looks in a row
        if ask.is_visible():
            ask.get_by_role("button", name="Select").click()
            settled = 0
        elif idle.is_visible():
            settled += 1
        if time.monotonic() > deadline:
            raise AssertionError("the notebook's kernel never became idle")
        time.sleep(0.5)


def cells(page):
    return page.locator(".jp-NotebookPanel:visible .jp-Cell")


def set_cell(page, index: int, text: str) -> None:
    """Replace a code cell's text, as typing it would (insert_text: no auto-indent or brackets)."""
    editor = cells(page).nth(index).locator(".cm-content")
    editor.click()
    page.keyboard.press("Control+a")
    page.keyboard.press("Delete")
    page.keyboard.insert_text(text)
    page.keyboard.press("Escape")


def select_cell(page, index: int) -> None:
    """The cell selected in command mode (where keys are commands: B inserts a cell below it)."""
    cell = cells(page).nth(index)
    cell.locator(".jp-InputPrompt").click()
    page.wait_for_function("el => el.classList.contains('jp-mod-selected')", arg=cell.element_handle())


def run_cell(page, index: int) -> None:
    select_cell(page, index)
    page.keyboard.press("Control+Enter")


def output(page, index: int, expect: str, timeout: float = LONG) -> str:
    """The cell's output once it contains `expect`."""
    return wait_text(cells(page).nth(index).locator(".jp-Cell-outputArea"), expect, timeout)


def open_terminal(page):
    """File > New > Terminal; returns the text the terminal shows (screen-reader mode keeps it in the page)."""
    menu(page, "File", "New")
    page.locator('.lm-Menu-itemLabel:text-is("Terminal")').first.click()
    terminal = page.locator(".jp-Terminal:visible")
    terminal.wait_for()
    screen = terminal.locator(".xterm-accessibility-tree")
    wait_text(screen, "$")
    terminal.click()
    return screen


def run_in_terminal(page, screen, command: str, timeout: float = 900_000) -> str:
    """Type `command` in a terminal of its own and wait until it exits: returns what the terminal
    shows, `COMMAND-EXIT STATUS USER` last. The marker is split in the typed line so that only
    the echo's output shows it whole."""
    page.keyboard.type(f"{command}; echo COMMAND\"\"-EXIT $? $(id -un)\n")
    return wait_text(screen, "COMMAND-EXIT ", timeout)


def save(page) -> None:
    """Ctrl+S, then until the notebook's tab no longer shows unsaved changes."""
    page.keyboard.press("Control+s")
    page.locator(".lm-TabBar-tab.jp-mod-current.jp-mod-dirty").wait_for(state="detached", timeout=60_000)
