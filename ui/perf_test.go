package ui_test

import (
	"encoding/json"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestExplorerPerformance measures the explorer in headless Chromium
// against a running server that holds data (it does not load any):
//
//	SEDIMENT_UI_PERF_URL=http://127.0.0.1:4000 SEDIMENT_UI_PERF_KEY=<private key> \
//	  go test ./ui -run TestExplorerPerformance -v
//
// The source searched is cloudflare.logs.prod (SEDIMENT_UI_PERF_SOURCE to
// change it). `sediment bench ingest --url ... --events 10000000` loads 10M
// events over the last 24 hours. It reports figures and asserts nothing
// about time: the machine decides those.
func TestExplorerPerformance(t *testing.T) {
	base, key := os.Getenv("SEDIMENT_UI_PERF_URL"), os.Getenv("SEDIMENT_UI_PERF_KEY")
	if base == "" || key == "" {
		t.Skip("SEDIMENT_UI_PERF_URL and SEDIMENT_UI_PERF_KEY name the server to measure")
	}
	source := os.Getenv("SEDIMENT_UI_PERF_SOURCE")
	if source == "" {
		source = "cloudflare.logs.prod"
	}
	b := newBrowser(t, base)
	b.shot = ""

	// Cold loads: a new document, nothing of the page in memory; the key
	// is set on another page of the origin first.
	cold := func(hash, mark string) float64 {
		b.run(chromedp.Navigate(base+"/health"),
			chromedp.Evaluate[chromedp.Void](`sessionStorage.setItem('sediment.key', `+jsString(key)+`)`),
			chromedp.Navigate(base+"/"+hash))
		b.waitFor(mark, `performance.getEntriesByName('`+mark+`').length > 0`)
		var ms float64
		b.eval(`performance.getEntriesByName('`+mark+`')[0].startTime`, &ms)
		return ms
	}
	for i := range 3 {
		t.Logf("cold load, sources view rendered: %.0f ms (run %d)", cold("#/sources", "sediment:sources-rendered"), i+1)
	}
	for i := range 3 {
		t.Logf("cold load, search of the last hour rendered: %.0f ms (run %d)",
			cold("#/search?source="+source+"&range=1h", "sediment:search-rendered"), i+1)
	}

	// Searches over the last hour, from the click to the frame that shows them.
	for _, q := range []string{"", "m.response.status_code:500", "m.request.method:POST", `~"rest/v1/rpc"`} {
		for i := range 3 {
			b.run(chromedp.Evaluate[chromedp.Void](`document.getElementById('summary').dataset.renderMs = ''`),
				chromedp.Evaluate[chromedp.Void](`document.getElementById('lql').value = `+jsString(q)),
				chromedp.Evaluate[chromedp.Void](`document.querySelector('.searchbar').requestSubmit()`))
			b.waitFor("render", `document.getElementById('summary').dataset.renderMs`)
			var res struct{ RenderMs, Count, Rows string }
			b.eval(`({...document.getElementById('summary').dataset})`, &res)
			t.Logf("search %-28q last hour: %s ms to render (%s matches, %s rows shown; run %d)", q, res.RenderMs, res.Count, res.Rows, i+1)
		}
	}

	// 1,000 rows: "Load older" nine times, then scroll through them.
	b.run(chromedp.Evaluate[chromedp.Void](`document.getElementById('lql').value = ''`),
		chromedp.Evaluate[chromedp.Void](`document.getElementById('summary').dataset.renderMs = ''`),
		chromedp.Evaluate[chromedp.Void](`document.querySelector('.searchbar').requestSubmit()`))
	b.waitFor("render", `document.getElementById('summary').dataset.renderMs`)
	start := time.Now()
	for n := 200; n <= 1000; n += 100 {
		b.run(chromedp.Click(chromedp.CSS("button.older")))
		b.waitFor("older rows", `Number(document.getElementById('summary').dataset.rows) >= `+strconv.Itoa(n))
	}
	t.Logf("9 × Load older to 1,000 rows: %.0f ms", float64(time.Since(start).Microseconds())/1000)
	var scroll struct {
		Frames                int
		P50, P95, Max         float64
		DOMRows, Rows         int
		ScrollHeightPx        float64
		Renders               int
		RenderMean, RenderMax float64
	}
	b.eval(`(async () => {
		const sc = document.querySelector('.rscroll');
		const stats = document.querySelector('.rtable').renderStats;
		Object.assign(stats, {count: 0, total: 0, max: 0});
		const times = [];
		let last = performance.now();
		const end = last + 3000;
		await new Promise((done) => {
			const step = (now) => {
				times.push(now - last); last = now;
				sc.scrollTop = (sc.scrollTop + 97) % (sc.scrollHeight - sc.clientHeight);
				if (now < end) requestAnimationFrame(step); else done();
			};
			requestAnimationFrame(step);
		});
		times.sort((a, b) => a - b);
		const q = (p) => times[Math.min(times.length - 1, Math.floor(p * times.length))];
		return {frames: times.length, p50: q(0.5), p95: q(0.95), max: times[times.length - 1],
			domRows: sc.querySelectorAll('[data-index]').length, rows: Number(document.getElementById('summary').dataset.rows),
			scrollHeightPx: sc.scrollHeight, renders: stats.count, renderMean: stats.total / Math.max(1, stats.count), renderMax: stats.max};
	})()`, &scroll)
	t.Logf("scrolling %d rows for 3 s: %d frames, frame time p50 %.1f ms, p95 %.1f ms, max %.1f ms; %d rows in the DOM; "+
		"%d table renders, %.2f ms mean, %.2f ms max",
		scroll.Rows, scroll.Frames, scroll.P50, scroll.P95, scroll.Max, scroll.DOMRows, scroll.Renders, scroll.RenderMean, scroll.RenderMax)
}

// jsString writes s as a JavaScript string literal.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
