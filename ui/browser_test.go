package ui_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/sediment/sediment/bench/gen"
)

// The browser tests load the explorer from a real server holding generated
// events into headless Chromium (Debian's chromium package) and check what
// a user sees. They skip when Chromium is missing, except in CI (CI set),
// where they fail. SEDIMENT_SCREENSHOTS=1 makes them write the screenshots
// of docs/ui/ that the README shows.

// browserZone is the browser's time zone: not UTC, so that a time shown
// in UTC is known to be converted on purpose.
const browserZone = "Asia/Kolkata"

func inCI() bool {
	v := strings.ToLower(os.Getenv("CI"))
	return v != "" && v != "0" && v != "false"
}

// chromiumPath finds Chromium, or skips (fails in CI).
func chromiumPath(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("SEDIMENT_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if inCI() {
		t.Fatal("Chromium is not installed, and CI must run the browser tests: apt-get install chromium (.ci/run does)")
	}
	t.Skip("Chromium is not installed (apt-get install chromium, or set SEDIMENT_CHROMIUM): browser tests skipped")
	return ""
}

// browser is one headless Chromium tab on the explorer.
type browser struct {
	t    *testing.T
	ctx  context.Context
	base string
	shot string // screenshot directory, "" when not asked

	mu         sync.Mutex
	pageErrors []string // uncaught exceptions and console errors of the page
}

func newBrowser(t *testing.T, base string) *browser {
	path := chromiumPath(t)
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 800),
		chromedp.Env("TZ=" + browserZone),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(actx)
	t.Cleanup(func() { cancelCtx(); cancelAlloc() })
	b := &browser{t: t, ctx: ctx, base: base}
	if os.Getenv("SEDIMENT_SCREENSHOTS") != "" {
		b.shot = filepath.Join("..", "docs", "ui")
		if err := os.MkdirAll(b.shot, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// The first action starts the browser, which lives as long as the
	// context of that call: it must have no timeout.
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 800)); err != nil {
		t.Fatalf("start Chromium: %v", err)
	}
	if err := chromedp.Listen(ctx, b.notePageError); err != nil {
		t.Fatal(err)
	}
	return b
}

// notePageError records the page's script errors (it runs on chromedp's
// reading goroutine: it only appends).
func (b *browser) notePageError(ev any) {
	var msg string
	switch e := ev.(type) {
	case *runtime.EventExceptionThrown:
		msg = "exception: " + e.ExceptionDetails.Text
		if e.ExceptionDetails.Exception != nil {
			msg += " " + e.ExceptionDetails.Exception.Description
		}
	case *runtime.EventConsoleAPICalled:
		if e.Type != runtime.ConsoleAPICalledTypeError {
			return
		}
		msg = "console.error:"
		for _, a := range e.Args {
			msg += " " + string(a.Value) + a.Description
		}
	default:
		return
	}
	b.mu.Lock()
	b.pageErrors = append(b.pageErrors, msg)
	b.mu.Unlock()
}

// run runs actions, failing the test on error (each call has 30 s).
func (b *browser) run(actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		b.t.Fatalf("browser: %v\npage text: %s", err, b.pageText())
	}
}

// eval evaluates a JavaScript expression (awaiting a promise) into v.
func (b *browser) eval(js string, v any) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	raw, err := chromedp.Run(ctx, chromedp.Evaluate[[]byte](js, chromedp.EvalAwaitPromise))
	if err != nil {
		b.t.Fatalf("browser: %s: %v\npage text: %s", js, err, b.pageText())
	}
	if err := json.Unmarshal(raw, v); err != nil {
		b.t.Fatalf("browser: %s: %v in %s", js, err, raw)
	}
}

// waitFor polls a JavaScript condition until it holds (15 s at most).
func (b *browser) waitFor(what, js string) {
	b.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool]("!!("+js+")"))
		cancel()
		if err == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			b.t.Fatalf("waiting for %s (%s): %v\npage text: %s", what, js, err, b.pageText())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (b *browser) pageText() string {
	ctx, cancel := context.WithTimeout(b.ctx, 3*time.Second)
	defer cancel()
	s, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText.slice(0, 2000) : ''`))
	return s
}

// screenshot writes the viewport to docs/ui/<name>.png when asked.
func (b *browser) screenshot(name string) {
	b.t.Helper()
	if b.shot == "" {
		return
	}
	b.run(chromedp.Sleep(150 * time.Millisecond))
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		b.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(b.shot, name+".png"), png, 0o644); err != nil {
		b.t.Fatal(err)
	}
}

// open loads a hash route with the key already in the session.
func (b *browser) open(key, hash string) {
	b.t.Helper()
	// Set the key on another page of the origin (sessionStorage is the
	// origin's), then load the explorer afresh.
	b.run(chromedp.Navigate(b.base+"/ui/app.css"),
		chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`sessionStorage.setItem('sediment.key', %q)`, key)),
		chromedp.Navigate(b.base+"/"+hash))
	b.waitFor("signed in", `!document.getElementById('nav').hidden`)
}

// searchDone waits for the search that the actions start to finish.
func (b *browser) searchDone(actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	b.run(chromedp.Evaluate[chromedp.Void](`document.getElementById('summary') && (document.getElementById('summary').dataset.state = 'stale')`))
	b.run(actions...)
	b.waitFor("search finished", `['done','error'].includes(document.getElementById('summary')?.dataset.state)`)
	var errText string
	b.eval(`(() => { const e = document.querySelector('.lql-error'); return e && !e.hidden ? e.innerText : ''; })()`, &errText)
	if errText != "" {
		b.t.Fatalf("search failed in the page: %s", errText)
	}
}

// shownRow is a results table row as the page shows it.
type shownRow struct {
	ID   string `json:"id"`
	Time string `json:"time"`
	Text string `json:"text"`
}

// tableRows scrolls the virtual table from top to bottom and returns every
// row it drew, in order.
func (b *browser) tableRows() []shownRow {
	b.t.Helper()
	var rows []shownRow
	b.eval(`(async () => {
		const sc = document.querySelector('.rscroll');
		const out = new Map();
		const frame = () => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
		sc.scrollTop = 0;
		for (;;) {
			await frame();
			for (const el of sc.querySelectorAll('[data-index]')) {
				out.set(Number(el.dataset.index), {id: el.dataset.id, time: el.querySelector('.time').textContent, text: el.innerText});
			}
			if (sc.scrollTop + sc.clientHeight >= sc.scrollHeight - 1) break;
			sc.scrollTop += Math.max(30, sc.clientHeight / 2);
		}
		sc.scrollTop = 0;
		await frame();
		return [...out.entries()].sort((a, b) => a[0] - b[0]).map((e) => e[1]);
	})()`, &rows)
	return rows
}

func micros(v any) int64 {
	switch x := v.(type) {
	case json.Number:
		n, _ := x.Int64()
		return n
	case float64:
		return int64(x)
	}
	return 0
}

func TestBrowser(t *testing.T) {
	chromiumPath(t) // skip before loading data when there is no browser
	es := startExplorerServer(t, 3)
	es.createEndpoint("ui.status_counts", "select r.status_code as status, count(*) as n\n"+
		"from `cloudflare.logs.prod` as t cross join unnest(t.metadata) as m cross join unnest(m.response) as r\n"+
		"where r.status_code >= cast(@min_status as int64)\ngroup by status order by status", 60)
	b := newBrowser(t, es.base)

	// The page's pure functions, run in the browser as the page runs them.
	t.Run("Modules", func(t *testing.T) {
		b.t = t
		b.run(chromedp.Navigate(es.base + "/"))
		var failures []string
		b.eval(`(async () => {
			const lql = await import('./ui/lql.js');
			const hist = await import('./ui/histogram.js');
			const time = await import('./ui/time.js');
			const out = [];
			const eq = (name, got, want) => { if (JSON.stringify(got) !== JSON.stringify(want)) out.push(name + ': ' + JSON.stringify(got) + ' != ' + JSON.stringify(want)); };
			eq('clause', lql.clause(['metadata', 'response', 'status_code'], 500, false), 'm.response.status_code:500');
			eq('clause quoted', lql.clause(['metadata', 'request', 'path'], '/a b"c\\', true), '-m.request.path:"/a b\\"c\\\\"');
			eq('clause array', lql.clause(['metadata', 'tags', 0], 'x', false), 'm.tags:@>x');
			eq('clause top', lql.clause(['project'], 'default', false), 'project:default');
			eq('clause null', lql.clause(['metadata', 'x'], null, false), 'm.x:NULL');
			eq('clause word NULL', lql.clause(['metadata', 'x'], 'null', false), 'm.x:"null"');
			eq('not filterable', lql.filterable(['timestamp'], 1) || lql.filterable(['metadata'], {}), false);
			eq('add', lql.addClause('a:1', 'b:2'), 'a:1 b:2');
			eq('add again', lql.addClause('a:1 b:2', 'b:2'), 'a:1 b:2');
			eq('add flips', lql.addClause('a:1 -b:2', 'b:2'), 'a:1 b:2');
			eq('split', lql.splitClauses('a:"x y" c:group_by(t::minute)  ~"q \\" r"'), ['a:"x y"', 'c:group_by(t::minute)', '~"q \\" r"']);
			eq('period', lql.chartPeriod('x c:count(*) c:group_by(t::h)'), 'hour');
			eq('aggregate', lql.chartAggregate('c:avg(m.latency) c:group_by(t::m)'), 'avg(m.latency)');
			eq('has chart', [lql.hasChart('a c:count(*)'), lql.hasChart('a:c')], [true, false]);
			const buckets = [];
			const from = Date.UTC(2025, 6, 10, 11, 0, 0) * 1000, to = from + 3600e6;
			for (let i = 0; i < 60; i++) buckets.push({timestamp: from + i * 60e6, count: i % 7});
			const {bars, width} = hist.bins(buckets, from, to, 60e6, 25);
			eq('bars sum', bars.reduce((n, b) => n + b.count, 0), buckets.reduce((n, b) => n + b.count, 0));
			eq('bars width', [width, bars.length <= 25], [300e6, true]);
			time.setLocal(false);
			eq('format', time.format(1752148805123456), '2025-07-10 12:00:05.123');
			eq('format us', time.format(1752148805123456, 'us'), '2025-07-10 12:00:05.123456');
			eq('parse', time.parse('2025-07-10 12:00:05.123456'), 1752148805123456);
			eq('parse Z', time.parse('2025-07-10T12:00:05Z'), 1752148805000000);
			eq('parse offset', time.parse('2025-07-10T17:30:05+05:30'), 1752148805000000);
			eq('iso', time.iso(1752148805123456), '2025-07-10T12:00:05.123456Z');
			eq('bad', time.parse('yesterday'), null);
			time.setLocal(true);
			eq('local', [time.format(1752148805123456), time.zoneLabel(1752148805123456)], ['2025-07-10 17:30:05.123', 'local, UTC+05:30']);
			eq('parse local', time.parse('2025-07-10 17:30:05'), 1752148805000000);
			time.setLocal(false);
			return out;
		})()`, &failures)
		for _, f := range failures {
			t.Error(f)
		}
	})

	t.Run("SignIn", func(t *testing.T) {
		b.t = t
		b.run(chromedp.Navigate(es.base+"/"), chromedp.WaitVisible(chromedp.CSS("#key")))
		b.screenshot("signin")
		b.run(chromedp.SendKeys(chromedp.CSS("#key"), "not-a-key"+kb.Enter))
		b.waitFor("the wrong key rejected", `document.getElementById('signin-error').textContent.includes('not accepted')`)
		var stored string
		b.eval(`sessionStorage.getItem('sediment.key') || ''`, &stored)
		if stored != "" {
			t.Fatalf("a rejected key was kept: %q", stored)
		}
		b.run(chromedp.Evaluate[chromedp.Void](`document.getElementById('key').value = ''`), chromedp.SendKeys(chromedp.CSS("#key"), privateKey+kb.Enter))
		b.waitFor("the sources view", `document.querySelector('table.sources tbody tr')`)
		b.eval(`sessionStorage.getItem('sediment.key') || ''`, &stored)
		if stored != privateKey {
			t.Fatalf("the key is not in sessionStorage: %q", stored)
		}
		var local string
		b.eval(`localStorage.length + ':' + document.cookie`, &local)
		if local != "0:" {
			t.Fatalf("the key may be kept beyond the session: localStorage/cookies %q", local)
		}
		// The source list shows the edge source's count as the API does.
		var access struct {
			Sources []struct {
				Name       string `json:"name"`
				EventCount int64  `json:"event_count"`
			} `json:"sources"`
		}
		es.getJSON("/api/access", nil, &access)
		var want int64
		for _, s := range access.Sources {
			if s.Name == edgeSource {
				want = s.EventCount
			}
		}
		var shown string
		b.eval(`[...document.querySelectorAll('table.sources tbody tr')].find((tr) => tr.cells[0].textContent === 'cloudflare.logs.prod').cells[1].textContent`, &shown)
		if want == 0 || strings.ReplaceAll(shown, ",", "") != strconv.FormatInt(want, 10) {
			t.Fatalf("sources view shows %q events for %s, the API %d", shown, edgeSource, want)
		}
		b.screenshot("sources")
	})

	t.Run("Search500LastHour", func(t *testing.T) {
		b.t = t
		b.open(privateKey, "#/search?source=cloudflare.logs.prod&range=1h")
		b.waitFor("first search", `document.getElementById('summary')?.dataset.state === 'done'`)
		// "/" focuses the LQL box; Enter runs it.
		b.run(chromedp.Evaluate[chromedp.Void](`document.activeElement && document.activeElement.blur()`), chromedp.KeyEvent("/"))
		var focused string
		b.eval(`document.activeElement.id`, &focused)
		if focused != "lql" {
			t.Fatalf("/ focused %q, not the LQL box", focused)
		}
		// chromedp sends the key's character apart from its keydown, which
		// a browser would not deliver after the page took the keydown.
		b.run(chromedp.Evaluate[chromedp.Void](`document.getElementById('lql').value = ''`))
		b.searchDone(chromedp.SendKeys(chromedp.CSS("#lql"), "m.response.status_code:500"+kb.Enter))

		var sum struct{ Count, Rows, From, To string }
		b.eval(`({...document.getElementById('summary').dataset})`, &sum)
		from, _ := strconv.ParseInt(sum.From, 10, 64)
		to, _ := strconv.ParseInt(sum.To, 10, 64)
		if to-from != 3600e6 {
			t.Fatalf("the last hour is %d µs long", to-from)
		}
		api := es.searchRows("m.response.status_code:500", from, to, 100)
		if len(api) == 0 {
			t.Fatal("the generated data has no status 500 in the last hour")
		}
		shown := b.tableRows()
		if len(shown) != len(api) {
			t.Fatalf("the page shows %d rows, the API returns %d", len(shown), len(api))
		}
		for i, r := range api {
			if shown[i].ID != r["id"] {
				t.Fatalf("row %d: the page shows %s, the API returns %v", i, shown[i].ID, r["id"])
			}
			// UTC, labelled, whatever the browser's zone.
			want := time.UnixMicro(micros(r["timestamp"])).UTC().Format("2006-01-02 15:04:05.000")
			if shown[i].Time != want {
				t.Fatalf("row %d: time %q, want %q (UTC)", i, shown[i].Time, want)
			}
		}
		var head string
		b.eval(`document.querySelector('.rhead').innerText`, &head)
		if !strings.Contains(head, "Timestamp (UTC)") {
			t.Fatalf("the time column is not labelled UTC: %q", head)
		}

		// The histogram's bars add up to the count, which is the API's.
		var bars []int64
		b.eval(`[...document.querySelectorAll('.histogram rect.bar')].map((r) => Number(r.dataset.count))`, &bars)
		var total int64
		for _, n := range bars {
			total += n
		}
		var chart struct {
			Chart []map[string]any `json:"chart"`
		}
		es.getJSON("/api/sources/"+edgeSource+"/search", url.Values{"lql": {"m.response.status_code:500 c:count(*)"},
			"from": {sum.From}, "to": {sum.To}}, &chart)
		var apiCount int64
		for _, c := range chart.Chart {
			apiCount += micros(c["count"])
		}
		if len(bars) < 10 || total != apiCount || sum.Count != strconv.FormatInt(apiCount, 10) {
			t.Fatalf("%d bars sum to %d; the page says %s events, the API counts %d", len(bars), total, sum.Count, apiCount)
		}
		if !strings.Contains(b.pageText(), "UTC") {
			t.Fatal("the page does not say its times are UTC")
		}

		// The local time toggle converts to the browser's zone.
		b.run(chromedp.Click(chromedp.CSS("#tz")))
		b.waitFor("local times", `document.querySelector('.rhead').innerText.includes('local, UTC+05:30')`)
		loc, _ := time.LoadLocation(browserZone)
		first := b.tableRows()[0]
		if want := time.UnixMicro(micros(api[0]["timestamp"])).In(loc).Format("2006-01-02 15:04:05.000"); loc != nil && first.Time != want {
			t.Fatalf("local time %q, want %q", first.Time, want)
		}
		b.run(chromedp.Click(chromedp.CSS("#tz")))
		b.waitFor("UTC again", `document.querySelector('.rhead').innerText.includes('Timestamp (UTC)')`)

		// A link with the state shows the same search.
		var hash string
		b.eval(`location.hash`, &hash)
		if !strings.Contains(hash, "q=m.response.status_code%3A500") || !strings.Contains(hash, "range=1h") {
			t.Fatalf("the URL does not hold the search: %s", hash)
		}
		b.screenshot("search")

		// Dragging across the histogram zooms to that span: an absolute
		// range, in the URL, over which the bars still sum to the count.
		var box struct{ X, Y, W, H float64 }
		b.eval(`(() => { const r = document.querySelector('.histogram').getBoundingClientRect(); return {x: r.x, y: r.y, w: r.width, h: r.height}; })()`, &box)
		y := box.Y + box.H/2
		b.searchDone(
			chromedp.MouseEvent(input.DispatchMouseEventTypeMousePressed, box.X+box.W*0.25, y, chromedp.ButtonLeft),
			chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, box.X+box.W*0.5, y, chromedp.ButtonLeft),
			chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, box.X+box.W*0.75, y, chromedp.ButtonLeft),
			chromedp.MouseEvent(input.DispatchMouseEventTypeMouseReleased, box.X+box.W*0.75, y, chromedp.ButtonLeft))
		var zoom struct{ Count, From, To string }
		b.eval(`({...document.getElementById('summary').dataset})`, &zoom)
		zfrom, _ := strconv.ParseInt(zoom.From, 10, 64)
		zto, _ := strconv.ParseInt(zoom.To, 10, 64)
		if zfrom <= from || zto >= to || zto-zfrom > (to-from)*6/10 || zto-zfrom < (to-from)*4/10 {
			t.Fatalf("zoomed to %d..%d from %d..%d", zfrom, zto, from, to)
		}
		b.eval(`location.hash`, &hash)
		if strings.Contains(hash, "range=") || !strings.Contains(hash, "from=") || !strings.Contains(hash, "to=") {
			t.Fatalf("the zoomed range is not in the URL: %s", hash)
		}
		b.eval(`[...document.querySelectorAll('.histogram rect.bar')].map((r) => Number(r.dataset.count))`, &bars)
		total = 0
		for _, n := range bars {
			total += n
		}
		if want := len(es.searchRows("m.response.status_code:500", zfrom, zto, 10000)); total != int64(want) || zoom.Count != strconv.Itoa(want) {
			t.Fatalf("zoomed: bars sum to %d, the page says %s, the API has %d events", total, zoom.Count, want)
		}
		// The link opens the same range, shown in the custom range inputs.
		b.open(privateKey, hash)
		b.waitFor("the linked search", `document.getElementById('summary')?.dataset.state === 'done'`)
		var linked struct{ From, To, Count string }
		b.eval(`({...document.getElementById('summary').dataset})`, &linked)
		var fromBox string
		b.eval(`document.getElementById('from').value`, &fromBox)
		if linked.From != zoom.From || linked.To != zoom.To || linked.Count != zoom.Count ||
			fromBox != time.UnixMicro(zfrom).UTC().Format("2006-01-02 15:04:05") {
			t.Fatalf("the link shows %+v (from box %q), the zoom %+v", linked, fromBox, zoom)
		}
	})

	// Text is readable: WCAG AA contrast (4.5:1) for each kind of text on
	// the search page, in the light and the dark scheme.
	t.Run("Contrast", func(t *testing.T) {
		b.t = t
		for _, scheme := range []string{"light", "dark"} {
			b.run(chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
				_, err := cdp.Call(ctx, tg, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
					Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}}})
				return err
			}))
			b.open(privateKey, "#/search?source=cloudflare.logs.prod&range=1h&q=m.response.status_code%3A500&cols=m.request.method")
			b.waitFor("the search", `document.getElementById('summary')?.dataset.state === 'done'`)
			b.run(chromedp.Click(chromedp.CSS(`.rrow[data-index="0"] .time`)))
			b.waitFor("the event", `document.querySelector('.drawer .json .key')`)
			var low []string
			b.eval(`(() => {
				const rgb = (c) => (c.match(/[\d.]+/g) || []).map(Number);
				const lum = ([r, g, b]) => [r, g, b].map((v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; })
					.reduce((s, v, i) => s + v * [0.2126, 0.7152, 0.0722][i], 0);
				const bg = (el) => {
					for (; el; el = el.parentElement) {
						const c = rgb(getComputedStyle(el).backgroundColor);
						if (c.length === 3 || (c.length === 4 && c[3] > 0.5)) return c.slice(0, 3);
					}
					return [255, 255, 255];
				};
				const out = [];
				for (const sel of ['body', '.summary', 'nav#nav a', 'button.primary', 'button#live', '.rhead .cell', '.rrow .time', '.rrow .message',
					'.rrow button.val', '.histogram text.tick', '.drawer .json .key', '.drawer .json .v-string', '.drawer .json .v-number', '.drawer .json .punct', '.drawer-title']) {
					const el = document.querySelector(sel);
					if (!el) { out.push(sel + ': missing'); continue; }
					const cs = getComputedStyle(el);
					const fg = rgb(el instanceof SVGElement ? cs.fill : cs.color).slice(0, 3);
					const [a, b] = [lum(fg), lum(bg(el))];
					const ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
					if (ratio < 4.5) out.push(sel + ': ' + ratio.toFixed(2));
				}
				return out;
			})()`, &low)
			for _, l := range low {
				t.Errorf("%s scheme: contrast below 4.5:1: %s", scheme, l)
			}
		}
		b.run(chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			_, err := cdp.Call(ctx, tg, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{})
			return err
		}))
	})

	t.Run("FieldClickAddsFilter", func(t *testing.T) {
		b.t = t
		b.open(privateKey, "#/search?source=cloudflare.logs.prod&range=1h&q=m.response.status_code%3A500")
		b.waitFor("the search", `document.getElementById('summary')?.dataset.state === 'done'`)
		b.run(chromedp.Click(chromedp.CSS(`.rrow[data-index="0"]`)))
		b.waitFor("the drawer", `document.querySelector('.drawer .json, .drawer .error')`)
		var drawerText string
		b.eval(`document.querySelector('.drawer').innerText`, &drawerText)
		if !strings.Contains(drawerText, `"metadata": {`) {
			t.Fatalf("the event's JSON is not shown: %s", drawerText)
		}
		var method string
		b.eval(`document.querySelector('.drawer button.val[title^="Add m.request.method:"]').textContent`, &method)
		b.screenshot("event")
		b.searchDone(chromedp.Click(chromedp.CSS(`.drawer button.val[title^="Add m.request.method:"]`)))
		var q string
		b.eval(`document.getElementById('lql').value`, &q)
		want := "m.response.status_code:500 m.request.method:" + strings.Trim(method, `"`)
		if q != want {
			t.Fatalf("query after the click %q, want %q", q, want)
		}
		// A column from the event, then a click on its "−" excludes a value.
		b.run(chromedp.Click(chromedp.CSS(`.rrow[data-index="0"]`)))
		b.waitFor("the event's JSON", `document.querySelector('.drawer button.addcol[title="Show m.request.path as a column"]')`)
		b.searchDone(chromedp.Click(chromedp.CSS(`.drawer button.addcol[title="Show m.request.path as a column"]`)))
		var path string
		b.eval(`document.querySelector('.rrow[data-index="0"] button.val').textContent`, &path)
		b.searchDone(chromedp.Click(chromedp.CSS(`.rrow[data-index="0"] button.exclude`)))
		b.eval(`document.getElementById('lql').value`, &q)
		if !strings.HasSuffix(q, " -m.request.path:"+quoteLQL(path)) {
			t.Fatalf("query after excluding %q: %q", path, q)
		}
		var paths []string
		b.eval(`[...document.querySelectorAll('.rrow button.val')].map((b) => b.textContent)`, &paths)
		if slices.Contains(paths, path) {
			t.Fatalf("an excluded path is still shown: %q", path)
		}
	})

	t.Run("LoadOlder", func(t *testing.T) {
		b.t = t
		b.open(privateKey, "#/search?source=cloudflare.logs.prod&range=1h")
		b.waitFor("the search", `document.getElementById('summary')?.dataset.state === 'done'`)
		for _, n := range []int{200, 300} {
			b.run(chromedp.Click(chromedp.CSS("button.older")))
			b.waitFor("older rows", `Number(document.getElementById('summary').dataset.rows) >= `+strconv.Itoa(n))
		}
		var sum struct{ From, To, Rows string }
		b.eval(`({...document.getElementById('summary').dataset})`, &sum)
		from, _ := strconv.ParseInt(sum.From, 10, 64)
		to, _ := strconv.ParseInt(sum.To, 10, 64)
		// Self-hosted Kong events carry whole seconds: pages end inside
		// runs of equal timestamps, which must be neither lost nor repeated.
		api := es.searchRows("", from, to, 300)
		shown := b.tableRows()
		if sum.Rows != "300" || len(shown) != len(api) {
			t.Fatalf("%s rows in the summary, %d in the table, the API gives %d", sum.Rows, len(shown), len(api))
		}
		for i := range api {
			if shown[i].ID != api[i]["id"] {
				t.Fatalf("row %d: %s on the page, %v from the API", i, shown[i].ID, api[i]["id"])
			}
		}
		var domRows int
		b.eval(`document.querySelectorAll('.rscroll [data-index]').length`, &domRows)
		if domRows >= 100 {
			t.Fatalf("%d rows in the DOM for 300: the table draws rows out of view", domRows)
		}
	})

	t.Run("LiveTail", func(t *testing.T) {
		b.t = t
		b.open(privateKey, "#/search?source=cloudflare.logs.prod&range=1h&q=m.response.status_code%3A500")
		b.waitFor("first search", `document.getElementById('summary')?.dataset.state === 'done'`)
		b.run(chromedp.Click(chromedp.CSS("#live")))
		b.waitFor("the tail connected", `document.getElementById('live-status')?.dataset.status === 'connected'`)
		probe := fmt.Sprintf("ui-tail-probe-%d", time.Now().UnixNano())
		other := fmt.Sprintf("ui-tail-other-%d", time.Now().UnixNano())
		es.ingest([]byte(`[{"event_message":"` + other + `","metadata":{"response":{"status_code":200}}},` +
			`{"event_message":"` + probe + `","metadata":{"response":{"status_code":500}}}]`))
		b.waitFor("the new event in the tail", fmt.Sprintf(`document.querySelector('.rtable').innerText.includes(%q)`, probe))
		var text, dropped string
		b.eval(`document.querySelector('.rtable').innerText`, &text)
		if strings.Contains(text, other) {
			t.Fatal("the tail shows an event its filter excludes")
		}
		b.eval(`document.getElementById('live-dropped').textContent`, &dropped)
		if dropped != "0 dropped" {
			t.Fatalf("dropped count %q", dropped)
		}
		// Paused, new events wait; resumed, they show.
		b.run(chromedp.Click(chromedp.CSS("#live-pause")))
		later := fmt.Sprintf("ui-tail-later-%d", time.Now().UnixNano())
		es.ingest([]byte(`[{"event_message":"` + later + `","metadata":{"response":{"status_code":500}}}]`))
		b.waitFor("the paused event counted", `document.querySelector('.livebar').innerText.includes('1 waiting')`)
		b.eval(`document.querySelector('.rtable').innerText`, &text)
		if strings.Contains(text, later) {
			t.Fatal("a paused tail drew a new event")
		}
		b.run(chromedp.Click(chromedp.CSS("#live-pause")))
		b.waitFor("the event after resuming", fmt.Sprintf(`document.querySelector('.rtable').innerText.includes(%q)`, later))
		b.run(chromedp.Click(chromedp.CSS("#live")))
		b.waitFor("the tail stopped", `document.getElementById('summary')?.dataset.state === 'done'`)

		// Unfiltered, a burst of traffic: at most 1,000 rows are kept, every
		// event is counted.
		b.run(chromedp.Evaluate[chromedp.Void](`document.getElementById('lql').value = ''`), chromedp.Click(chromedp.CSS("#live")))
		b.waitFor("the tail connected", `document.getElementById('live-status')?.dataset.status === 'connected'`)
		g := gen.New(gen.EdgeLogs, gen.Options{Seed: 11, Start: time.Now().Add(-time.Second), Rate: 1000, InOrder: true})
		for range 3 {
			es.ingest(g.AppendVectorBatch(nil, 500))
		}
		b.waitFor("1,500 events received", `document.querySelector('.livebar').innerText.includes('1,500 received')`)
		b.waitFor("the newest 1,000 shown", `document.querySelector('.rtable').getAttribute('aria-rowcount') === '1000'`)
		b.screenshot("live")
		b.run(chromedp.Click(chromedp.CSS("#live")))
	})

	t.Run("LQLErrorInline", func(t *testing.T) {
		b.t = t
		b.open(privateKey, "#/search?source=cloudflare.logs.prod&range=1h")
		b.waitFor("first search", `document.getElementById('summary')?.dataset.state === 'done'`)
		b.run(chromedp.Evaluate[chromedp.Void](`document.getElementById('lql').value = ''`), chromedp.SendKeys(chromedp.CSS("#lql"), "m.response.status_code:500 m.nope.nothing:1"+kb.Enter))
		b.waitFor("the error", `!document.querySelector('.lql-error').hidden`)
		var clause, mark string
		b.eval(`document.querySelector('.lql-error .clause').textContent`, &clause)
		b.eval(`document.querySelector('.lql-error mark').textContent`, &mark)
		if !strings.HasPrefix(clause, "m.nope.nothing") || mark != clause {
			t.Fatalf("the error names clause %q and marks %q", clause, mark)
		}
	})

	t.Run("Endpoint", func(t *testing.T) {
		b.t = t
		b.open(privateKey, "#/endpoints?name=ui.status_counts")
		b.waitFor("the endpoint form", `document.getElementById('param-min_status')`)
		var sql string
		b.eval(`document.querySelector('details.sql pre').textContent`, &sql)
		if !strings.Contains(sql, "@min_status") {
			t.Fatalf("the endpoint's SQL is not shown: %q", sql)
		}
		b.run(chromedp.SendKeys(chromedp.CSS("#param-min_status"), "400"+kb.Enter))
		b.waitFor("the endpoint's rows", `document.getElementById('ep-meta')?.dataset.state === 'done'`)
		var res struct {
			Result []map[string]any `json:"result"`
		}
		es.getJSON("/api/endpoints/query/ui.status_counts", url.Values{"min_status": {"400"}}, &res)
		var cells [][]string
		b.eval(`[...document.querySelectorAll('.ep-table tbody tr')].map((tr) => [...tr.cells].map((c) => c.textContent))`, &cells)
		if len(res.Result) == 0 || len(cells) != len(res.Result) {
			t.Fatalf("the page shows %d rows, the endpoint returns %d", len(cells), len(res.Result))
		}
		for i, r := range res.Result {
			if got := []string{cells[i][0], cells[i][1]}; got[0] != fmt.Sprint(r["status"]) || got[1] != fmt.Sprint(r["n"]) {
				t.Fatalf("row %d: page %v, endpoint %v", i, got, r)
			}
		}
		var meta struct{ Cache, Rows string }
		b.eval(`({...document.getElementById('ep-meta').dataset})`, &meta)
		// The API call above filled the cache the page's first run may
		// have missed; a second run is answered from it.
		b.run(chromedp.Evaluate[chromedp.Void](`document.getElementById('ep-meta').dataset.state = ''`), chromedp.Click(chromedp.CSS(".ep-form button[type=submit]")))
		b.waitFor("the second run", `document.getElementById('ep-meta')?.dataset.state === 'done'`)
		b.eval(`({...document.getElementById('ep-meta').dataset})`, &meta)
		var metaText string
		b.eval(`document.getElementById('ep-meta').textContent`, &metaText)
		if meta.Cache != "hit" || !strings.Contains(metaText, "answered from the cache") || !strings.Contains(metaText, " ms") {
			t.Fatalf("second run: cache %q, %q", meta.Cache, metaText)
		}
		b.screenshot("endpoints")

		// A sandboxed endpoint takes the user's SQL over its CTEs.
		b.open(privateKey, "#/endpoints?name=logs.all")
		b.waitFor("the sandbox box", `document.getElementById('consumer')`)
		b.run(chromedp.SendKeys(chromedp.CSS("#param-project"), "default"), chromedp.SendKeys(chromedp.CSS("#consumer"), "select count(*) as n from edge_logs"),
			chromedp.Click(chromedp.CSS(".ep-form button[type=submit]")))
		b.waitFor("the sandboxed rows", `document.getElementById('ep-meta')?.dataset.state === 'done'`)
		var n string
		b.eval(`document.querySelector('.ep-table tbody td').textContent`, &n)
		if v, err := strconv.Atoi(n); err != nil || v <= 0 {
			t.Fatalf("sandboxed count %q", n)
		}
	})

	t.Run("ScopedKeys", func(t *testing.T) {
		b.t = t
		b.open(queryKey, "#/sources")
		var links []string
		b.eval(`[...document.querySelectorAll('#nav a')].filter((a) => !a.hidden).map((a) => a.textContent)`, &links)
		if !slices.Equal(links, []string{"Search", "Endpoints"}) {
			t.Fatalf("a query key sees %v", links)
		}
		var hash string
		b.eval(`location.hash`, &hash)
		if !strings.HasPrefix(hash, "#/search") {
			t.Fatalf("a query key asking for the sources view is at %s", hash)
		}
		b.run(chromedp.Click(chromedp.CSS("#signout")), chromedp.WaitVisible(chromedp.CSS("#key")),
			chromedp.SendKeys(chromedp.CSS("#key"), publicKey+kb.Enter))
		b.waitFor("the ingest-only notice", `document.body.innerText.includes('may only send events')`)
	})

	t.Cleanup(func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		for _, e := range b.pageErrors {
			t.Errorf("the page had a script error: %s", e)
		}
	})

	t.Run("Phone", func(t *testing.T) {
		b.t = t
		b.run(chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2), chromedp.EmulateMobile))
		defer b.run(chromedp.EmulateViewport(1280, 800))
		b.open(privateKey, "#/search?source=cloudflare.logs.prod&range=1h&q=m.response.status_code%3A500")
		b.waitFor("search", `document.getElementById('summary')?.dataset.state === 'done'`)
		var overflow bool
		b.eval(`document.documentElement.scrollWidth > window.innerWidth + 1`, &overflow)
		if overflow {
			t.Fatal("the search page is wider than a phone screen")
		}
		b.screenshot("search-phone")
	})
}

// quoteLQL writes a value as the page writes it in a filter.
func quoteLQL(v string) string {
	ok := v != ""
	for _, r := range v {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			ok = false
		}
	}
	if ok {
		return v
	}
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(v) + `"`
}

var _ = http.MethodGet
