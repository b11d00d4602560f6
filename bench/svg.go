package bench

import (
	"bufio"
	"fmt"
	"html"
	"io"
	"math"
)

// WriteSVG draws a sweep as a scatter chart: ingest rate across, bytes per
// event on disk up, one numbered point per setting (numbers explained in a
// legend, the best setting for the report's goal in red). Better settings
// lie toward the bottom right.
func WriteSVG(w io.Writer, s *SweepReport) error {
	var pts []int
	for i, r := range s.Results {
		if r.Error == "" && r.Events > 0 {
			pts = append(pts, i)
		}
	}
	const (
		width, plotH   = 900, 420
		left, top      = 80, 40
		plotW          = 520
		legendX        = left + plotW + 30
		legendLine     = 16
		axisTicks      = 5
		pointRadius    = 5
		fontSize       = 12
		titleFontSize  = 15
		legendFontSize = 11
	)
	height := max(top+plotH+60, top+20+legendLine*(len(pts)+1))
	bw := bufio.NewWriter(w)
	p := func(format string, a ...any) { fmt.Fprintf(bw, format, a...) }
	p(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif">`+"\n", width, height, width, height)
	p(`<rect width="100%%" height="100%%" fill="white"/>` + "\n")
	p(`<text x="%d" y="22" font-size="%d">Storage settings: bytes per event vs ingest rate (goal: %s)</text>`+"\n", left, titleFontSize, html.EscapeString(string(s.Goal)))

	xmin, xmax := bounds(s.Results, pts, func(r SweepResult) float64 { return r.EventsPerS })
	ymin, ymax := bounds(s.Results, pts, func(r SweepResult) float64 { return r.BytesPerEvent })
	sx := func(x float64) float64 { return left + (x-xmin)/(xmax-xmin)*plotW }
	sy := func(y float64) float64 { return top + plotH - (y-ymin)/(ymax-ymin)*plotH }

	// Axes, ticks and grid.
	p(`<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#444"/>`+"\n", left, top, plotW, plotH)
	for i := 0; i <= axisTicks; i++ {
		xv := xmin + (xmax-xmin)*float64(i)/axisTicks
		yv := ymin + (ymax-ymin)*float64(i)/axisTicks
		x, y := sx(xv), sy(yv)
		p(`<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#ddd"/>`+"\n", x, top, x, top+plotH)
		p(`<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/>`+"\n", left, y, left+plotW, y)
		p(`<text x="%.1f" y="%d" font-size="%d" text-anchor="middle">%s</text>`+"\n", x, top+plotH+16, fontSize, thousands(xv))
		p(`<text x="%d" y="%.1f" font-size="%d" text-anchor="end">%.0f</text>`+"\n", left-6, y+4, fontSize, yv)
	}
	p(`<text x="%d" y="%d" font-size="%d" text-anchor="middle">ingest rate (events/s, in process)</text>`+"\n", left+plotW/2, top+plotH+38, fontSize)
	p(`<text x="18" y="%d" font-size="%d" text-anchor="middle" transform="rotate(-90 18 %d)">bytes per event on disk</text>`+"\n", top+plotH/2, fontSize, top+plotH/2)

	// Points, numbered; the legend names them.
	for n, i := range pts {
		r := s.Results[i]
		color := "#1f5fa8"
		if i == s.Best {
			color = "#c0392b"
		}
		x, y := sx(r.EventsPerS), sy(r.BytesPerEvent)
		p(`<circle cx="%.1f" cy="%.1f" r="%d" fill="%s"><title>%s</title></circle>`+"\n", x, y, pointRadius, color, html.EscapeString(r.Name))
		p(`<text x="%.1f" y="%.1f" font-size="%d" fill="%s">%d</text>`+"\n", x+pointRadius+2, y-pointRadius, legendFontSize, color, n+1)
		ly := top + 10 + legendLine*n
		p(`<text x="%d" y="%d" font-size="%d" fill="%s">%d  %s  (%.0f B, %s/s, q %s ms)</text>`+"\n", legendX, ly, legendFontSize, color, n+1,
			html.EscapeString(r.Name), r.BytesPerEvent, thousands(r.EventsPerS), msCell(r.QueryScoreMs))
	}
	if len(pts) == 0 {
		p(`<text x="%d" y="%d" font-size="%d">no successful setting</text>`+"\n", left+20, top+30, fontSize)
	}
	p("</svg>\n")
	return bw.Flush()
}

// bounds returns a padded [lo, hi] range of f over the results at idx,
// never empty.
func bounds(rs []SweepResult, idx []int, f func(SweepResult) float64) (float64, float64) {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, i := range idx {
		v := f(rs[i])
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	if len(idx) == 0 {
		return 0, 1
	}
	pad := (hi - lo) * 0.08
	if pad == 0 {
		pad = math.Max(math.Abs(hi)*0.1, 1)
	}
	return math.Max(lo-pad, 0), hi + pad
}
