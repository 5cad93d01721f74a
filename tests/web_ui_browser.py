#!/usr/bin/python3
"""Drives Debian's headless chromium (chromedriver, python3-selenium) through
berthd's dashboard (/ui) and checks what each page shows; called by
tests/web_ui_browser_test.cc against a live berthd with real containers.

Exits 0 when every check passes; 1 with the failed check on stderr; 2 when
chromium, chromedriver or selenium is missing (the test then fails: install
them with tools/setup.sh). Writes a PNG screenshot of every page to --outdir.
"""
import argparse
import os
import sys
import urllib.error
import urllib.request

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)
    print("ok: " + msg)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", required=True)        # http://127.0.0.1:PORT
    ap.add_argument("--reader", required=True)      # a reader token
    ap.add_argument("--operator", required=True)    # an operator token
    ap.add_argument("--outdir", required=True)
    ap.add_argument("--running", required=True)     # a running job's id
    ap.add_argument("--waiting", required=True)     # a job waiting for memory
    ap.add_argument("--done", required=True)        # a finished job with a hostile log
    ap.add_argument("--workspace", required=True)   # the waiting job's workspace
    ap.add_argument("--hostile-action", required=True)
    ap.add_argument("--hostile-log", required=True)
    ap.add_argument("--memory-budget", required=True)  # "1 GiB"
    ap.add_argument("--growing", required=True)     # a running job printing a line a second
    ap.add_argument("--finisher", required=True)    # a running job that ends in a minute
    a = ap.parse_args()

    for path in (CHROMIUM, CHROMEDRIVER):
        if not os.access(path, os.X_OK):
            print("MISSING: %s (run tools/setup.sh)" % path, file=sys.stderr)
            sys.exit(2)
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
        from selenium.webdriver.common.by import By
        from selenium.common.exceptions import (StaleElementReferenceException,
                                                WebDriverException)
        from selenium.webdriver.support.ui import Select, WebDriverWait
    except ImportError as e:
        print("MISSING: python3-selenium (run tools/setup.sh): %s" % e, file=sys.stderr)
        sys.exit(2)

    os.makedirs(a.outdir, exist_ok=True)
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage",
                "--window-size=1280,1000", "--disable-gpu", "--no-first-run",
                "--user-data-dir=" + os.path.join(a.outdir, ".chromium-profile")):
        opts.add_argument(arg)
    d = webdriver.Chrome(service=Service(CHROMEDRIVER), options=opts)
    d.set_page_load_timeout(30)

    def shot(name):
        path = os.path.join(a.outdir, name + ".png")
        d.save_screenshot(path)
        print("screenshot: " + path)

    def body():
        return d.find_element(By.TAG_NAME, "body").text

    def gone(element):
        # Stale once its page is replaced; while the page is being
        # replaced chromedriver may answer instead that the node "does not
        # belong to the document" (expected_conditions.staleness_of lets
        # that escape): gone too.
        def condition(_):
            try:
                element.is_enabled()
                return False
            except StaleElementReferenceException:
                return True
            except WebDriverException as e:
                if "does not belong to the document" in str(e):
                    return True
                raise
        return condition

    def click(by, what):
        # A click that submits a form or follows a link returns before the
        # next page is there: await the old page's going (its <html>
        # element goes stale), not a sleep.
        old = d.find_element(By.TAG_NAME, "html")
        d.find_element(by, what).click()
        WebDriverWait(d, 30).until(gone(old))

    def not_executed(page):
        # The hostile strings set document.title and add <pwned> elements
        # if they ever run.
        check("pwned" not in d.title, page + ": title not changed by a hostile string")
        check(not d.find_elements(By.TAG_NAME, "pwned"),
              page + ": no element created by a hostile string")
        check(not d.find_elements(By.CSS_SELECTOR, "main script, main img"),
              page + ": no markup from job strings")

    try:
        # Without a token: the login form, nothing else.
        d.get(a.base + "/ui")
        check(d.find_elements(By.ID, "token"), "no token: the login form is shown")
        check("Budgets" not in body(), "no token: no data shown")
        shot("login")
        # A wrong token is refused.
        d.find_element(By.ID, "token").send_keys("not-a-valid-token-at-all")
        click(By.ID, "login")
        check("not valid" in body(), "a wrong token is refused")
        # A reader logs in: the cookie is HttpOnly and SameSite=Strict.
        d.find_element(By.ID, "token").send_keys(a.reader)
        click(By.ID, "login")
        cookies = {c["name"]: c for c in d.get_cookies()}
        check("berth_session" in cookies, "login sets the session cookie")
        c = cookies["berth_session"]
        check(a.reader not in c.get("value", ""), "the cookie holds a session id, not the token")
        check(len(c.get("value", "")) == 64, "the session id is 256 random bits")
        check(c.get("httpOnly") is True, "the cookie is HttpOnly")
        check(c.get("sameSite") == "Strict", "the cookie is SameSite=Strict")
        check(d.execute_script("return document.cookie") == "",
              "scripts cannot read the cookie")

        # Events, live: the finisher's events, then its end appears without
        # a reload (the page keeps a mark set now).
        d.get(a.base + "/ui/events?job=" + a.finisher)
        rows = d.find_element(By.ID, "events").text
        check(a.finisher in rows and "running" in rows, "events page lists the job's events")
        check("succeeded" not in rows, "the finisher has not finished yet (else the live "
              "check below proves nothing)")
        d.execute_script("window.berthMark = 1")
        WebDriverWait(d, 30).until(
            lambda _: d.find_element(By.ID, "events-status").text == "live")
        WebDriverWait(d, 120).until(
            lambda _: "succeeded" in d.find_element(By.ID, "events").text)
        check(d.execute_script("return window.berthMark") == 1,
              "the finisher's end appeared live, without a reload")
        live = [r for r in d.find_elements(By.CSS_SELECTOR, "table#events tr")
                if "succeeded" in r.text]
        links = live[0].find_elements(By.CSS_SELECTOR, "td a") if live else []
        check(len(links) == 1 and links[0].text == a.finisher and
              links[0].get_attribute("href") == a.base + "/ui/job?id=" + a.finisher,
              "the live row's job is a link to the job's page, like the static rows")
        not_executed("events")
        shot("events")
        # Filter events with the form: only the done job's.
        d.get(a.base + "/ui/events")
        d.find_element(By.ID, "e-job").send_keys(a.done)
        Select(d.find_element(By.ID, "e-type")).select_by_value("job_state_changed")
        click(By.ID, "filter-events")
        check("job=" in d.current_url and "type=job_state_changed" in d.current_url,
              "the events filter is in the URL: " + d.current_url)
        rows = d.find_elements(By.CSS_SELECTOR, "table#events tr")[1:]
        check(len(rows) >= 2, "the filter keeps the done job's events")
        check(all(a.done in r.text for r in rows), "the filter drops other jobs' events")

        # Jobs: find the finished job by search, open it.
        d.get(a.base + "/ui/jobs")
        listed = d.find_element(By.ID, "jobs").text
        check(a.waiting in listed and a.done in listed and a.running in listed,
              "the jobs page lists every state")
        not_executed("jobs")
        d.find_element(By.ID, "f-id").send_keys(a.done[:-2])
        Select(d.find_element(By.ID, "f-state")).select_by_value("succeeded")
        click(By.ID, "search")
        check("state=succeeded" in d.current_url and "id=" in d.current_url,
              "the search is in the URL: " + d.current_url)
        listed = d.find_element(By.ID, "jobs").text
        check(a.done in listed, "the search finds the finished job")
        check(a.running not in listed and a.waiting not in listed,
              "the search leaves out jobs in other states")
        # The CSV link carries the same filters; the file lists the same
        # jobs (a reader may export what the list shows).
        href = d.find_element(By.ID, "csv").get_attribute("href")
        check("/ui/jobs.csv?" in href and "state=succeeded" in href and "id=" in href,
              "the list links its CSV with the same filters: " + href)
        session = {c["name"]: c for c in d.get_cookies()}["berth_session"]["value"]
        status, headers, data = fetch(href, session)
        check(status == 200 and headers.get("Content-Type", "").startswith("text/csv"),
              "the CSV answers as text/csv: %d %s" % (status, headers.get("Content-Type")))
        check("attachment" in headers.get("Content-Disposition", ""), "the CSV is a file")
        lines = data.decode().split("\r\n")
        check(lines[0].startswith("id,state,workspace,"), "the CSV has its header line")
        check(any(l.startswith(a.done + ",succeeded,") for l in lines[1:]),
              "the CSV lists the job the search found")
        check(a.running not in data.decode() and a.waiting not in data.decode(),
              "the CSV leaves out what the filters leave out")
        shot("jobs")
        click(By.LINK_TEXT, a.done)
        check(a.done in d.title, "the search result opens the job: " + d.title)
        spec = d.find_element(By.ID, "spec").text
        check("sh -c" in spec and "second line" in spec, "the job page shows its command")
        attempt = d.find_element(By.ID, "attempt-1").text
        check("succeeded" in attempt, "the attempts table shows the attempt: " + attempt)
        check(not d.find_elements(By.ID, "tail-1"), "a reader gets no log links")
        check("running -> succeeded" in d.find_element(By.ID, "jobevents").text,
              "the job page lists its events")

        # Workspaces and right-sizing.
        d.get(a.base + "/ui/workspaces")
        ws = d.find_element(By.ID, "workspaces").text
        check("ws-done" in ws and a.workspace in ws, "workspaces page lists the workspaces")
        shot("workspaces")
        d.get(a.base + "/ui/rightsize")
        check(d.find_elements(By.ID, "rightsize"), "right-sizing page answers")
        shot("rightsize")

        # Overview.
        d.get(a.base + "/ui")
        check(d.title == "Overview - Berth", "overview title: " + d.title)
        text = body()
        check("Budgets" in text and "memory" in text and "CPU" in text and "workers" in text,
              "overview shows the budgets")
        check(("of " + a.memory_budget) in text, "overview shows the memory budget")
        check("pool database" in text, "overview shows each pool")
        queue = d.find_element(By.ID, "queue").text
        check("queued" in queue, "overview shows the queue")
        drain = d.find_element(By.ID, "drain").text
        check(drain != "", "overview shows the drain forecast: " + drain)
        not_executed("overview")
        shot("overview")

        # Plan: the waiting job, its verdict and reason, filterable.
        d.get(a.base + "/ui/plan")
        text = body()
        check(a.waiting in text, "plan lists the waiting job")
        check("waiting_for_memory" in text, "plan shows the reason")
        check("needs" in text, "plan shows why (the summary)")
        not_executed("plan")
        shot("plan")
        d.get(a.base + "/ui/plan?workspace=" + a.workspace + "&verdict=wait")
        check(a.waiting in body(), "plan filter by workspace keeps the job")
        d.get(a.base + "/ui/plan?workspace=no-such-workspace")
        check(a.waiting not in d.find_element(By.ID, "plan").text,
              "plan filter by another workspace drops the job")
        check("0 of" in d.find_element(By.ID, "count").text, "plan filter counts 0")

        # The waiting job: its explanation and the hostile action as text.
        d.get(a.base + "/ui/job?id=" + a.waiting)
        text = body()
        expl = d.find_element(By.ID, "explanation").text
        check("memory" in expl, "job page shows the explanation: " + expl)
        check(a.hostile_action in text, "the hostile action is shown as text")
        check(not d.find_elements(By.ID, "fulllog"), "a reader gets no full-log link")
        not_executed("job (waiting)")
        shot("job_waiting")

        # The finished job: its hostile log lines as text in the tail.
        d.get(a.base + "/ui/job?id=" + a.done)
        tail = d.find_element(By.ID, "logtail").text
        check(a.hostile_log in tail, "the log tail shows the hostile line as text")
        not_executed("job (done)")
        shot("job_done")

        # The running job.
        d.get(a.base + "/ui/job?id=" + a.running)
        check("running" in body(), "the running job's page says running")
        shot("job_running")

        # Running: the running job with its reservation; nodes: one host.
        d.get(a.base + "/ui/running")
        rows = d.find_element(By.ID, "running").text
        check(a.running in rows, "running page lists the running job")
        check("64 MiB /" in rows, "running page shows the reservation")
        check(a.waiting not in rows, "running page leaves out queued jobs")
        not_executed("running")
        shot("running")
        d.get(a.base + "/ui/nodes")
        check(d.find_elements(By.ID, "nodes"), "nodes page answers")
        shot("nodes")

        # The 24-hour chart: SVG drawn by berthd from its ring of samples.
        d.get(a.base + "/ui/chart")
        for panel in ("chart-memory", "chart-cpu", "chart-workers", "chart-queue"):
            check(d.find_elements(By.CSS_SELECTOR, "svg#%s polyline.budget, svg#%s polyline"
                                  % (panel, panel)), "chart panel " + panel + " is drawn")
        pts = d.find_element(By.CSS_SELECTOR, "svg#chart-memory polyline.reserved")
        check(pts.get_attribute("points").strip() != "", "the memory chart has samples")
        check(not d.find_elements(By.TAG_NAME, "script"), "the chart page has no script")
        shot("chart")

        # A reader may not read the full log.
        d.get(a.base + "/ui/log?id=" + a.done)
        check("PERMISSION_DENIED" in body(), "a reader is refused the full log")

        # Log out; an operator logs in and reads the full log.
        session = {c["name"]: c for c in d.get_cookies()}["berth_session"]["value"]
        check(fetch_status(a.base + "/ui", session) == 200, "the session id opens the pages")
        d.get(a.base + "/ui")
        click(By.CSS_SELECTOR, "header form button")
        check(d.find_elements(By.ID, "token"), "log out returns to the login form")
        check(fetch_status(a.base + "/ui", session) == 401,
              "after log out the old session id is refused by berthd, not only forgotten")
        d.get(a.base + "/ui/plan")
        check(d.find_elements(By.ID, "token"), "after log out the pages are refused")
        d.find_element(By.ID, "token").send_keys(a.operator)
        click(By.ID, "login")
        d.get(a.base + "/ui/job?id=" + a.done)
        click(By.ID, "fulllog")
        log = d.find_element(By.ID, "log").text
        check(a.hostile_log in log, "an operator reads the full log, as text")
        not_executed("full log")
        shot("log")
        # The attempt's tail and the download of its whole log.
        d.get(a.base + "/ui/job?id=" + a.done)
        click(By.ID, "tail-1")
        tail = d.find_element(By.ID, "log").text
        check(a.hostile_log in tail and "second line" in tail, "the tail shows the log's end")
        not_executed("log tail")
        session = {c["name"]: c for c in d.get_cookies()}["berth_session"]["value"]
        status, headers, data = fetch(a.base + "/ui/log/download?id=" + a.done + "&attempt=1",
                                      session)
        check(status == 200, "the download answers: %d" % status)
        check("attachment" in headers.get("Content-Disposition", ""),
              "the download is a file: " + headers.get("Content-Disposition", ""))
        check(a.hostile_log.encode() in data and b"second line" in data,
              "the download holds the whole log")

        # A running job's log grows on its page, without a reload.
        d.get(a.base + "/ui/job?id=" + a.growing)
        d.execute_script("window.berthMark = 1")
        WebDriverWait(d, 30).until(
            lambda _: "tick-" in d.find_element(By.ID, "livelog").text)
        first = d.find_element(By.ID, "livelog").text.count("tick-")
        WebDriverWait(d, 30).until(
            lambda _: d.find_element(By.ID, "livelog").text.count("tick-") >= first + 3)
        check(d.execute_script("return window.berthMark") == 1,
              "the live log grew from %d lines without a reload" % first)
        lines = d.find_element(By.ID, "livelog").text.split("\n")
        ticks = [l for l in lines if l.startswith("tick-")]
        check(ticks == ["tick-%d" % i for i in range(len(ticks))],
              "the live log has every line once, in order")
        check(d.find_element(By.ID, "livelog-status").text == "live", "the live log says live")
        shot("job_live")
    finally:
        d.quit()
    print("all checks passed")


def fetch(url, session):
    """(status, headers, body) of GET url with the session cookie."""
    req = urllib.request.Request(url, headers={"Cookie": "berth_session=" + session})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()


def fetch_status(url, session):
    """The HTTP status of GET url with the session cookie (no browser)."""
    req = urllib.request.Request(url, headers={"Cookie": "berth_session=" + session})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code


if __name__ == "__main__":
    main()
